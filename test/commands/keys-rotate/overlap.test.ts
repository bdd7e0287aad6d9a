// tier: in-process
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalServer, svc, tempConfigDir, type LocalServer } from '../../helpers/in-process.js';
import { scriptedPrompter } from '../../helpers/prompter.js';
import { shownText } from '../../helpers/shown-text.js';

// docs/contract.md §C8: see what expires, clean up what is dead, rotate without a
// gap. Time moves on the reference server's clock, never by sleeping.

describe('rotate --overlap, --finish and --cancel', () => {
  let server: LocalServer;
  const config = tempConfigDir();
  const env = () => ({ SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: server.url });
  const profile = () => JSON.parse(readFileSync(join(config.dir, 'config.json'), 'utf8')).profiles.default;
  let oldId: string;
  beforeAll(async () => {
    server = await startLocalServer();
    expect((await svc(['login', '--with-key'], env(), { input: server.apiKey! })).exitCode).toBe(0);
    oldId = JSON.parse((await svc(['keys', 'create', 'fleet', '--json'], env())).stdout).key.id;
  });
  afterAll(async () => {
    await server.stop();
    config.remove();
  });
  const status = async (id: string) => JSON.parse((await svc(['keys', 'view', id, '--json'], env())).stdout).status;

  it('leaves the old key working, and the profile remembers the pair after the process is gone', async () => {
    const result = await svc(['keys', 'rotate', oldId, '--overlap'], env());
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^sk_[A-Za-z0-9]{64}$/);
    const pending = profile().pendingRotation;
    expect(pending).toMatchObject({ oldId, newId: expect.stringMatching(/^key_/) });
    expect(await status(oldId)).toBe('enabled');
    expect(await status(pending.newId)).toBe('enabled');
  });

  it('reminds once per command until finished; a second --overlap is refused', async () => {
    const list = await svc(['keys', 'list'], env());
    expect(list.stderr.match(/A rotation is pending/g)).toHaveLength(1);
    expect((await svc(['keys', 'rotate', oldId, '--overlap'], env())).exitCode).toBe(2);
    expect((await svc(['keys', 'list', '--quiet'], env())).stderr).not.toContain('A rotation is pending');
  });

  it('--finish revokes the old key and ends the reminders', async () => {
    const { newId } = profile().pendingRotation;
    const result = await svc(['keys', 'rotate', '--finish'], env());
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain(`Revoked the old key ${oldId}`);
    expect((await svc(['keys', 'view', oldId], env())).exitCode).toBe(4);
    expect(await status(newId)).toBe('enabled');
    expect(profile().pendingRotation).toBeUndefined();
    expect((await svc(['keys', 'list'], env())).stderr).not.toContain('A rotation is pending');
    expect((await svc(['keys', 'rotate', '--finish'], env())).exitCode).toBe(2);
  });

  it('--cancel revokes the new key instead', async () => {
    const fleet = JSON.parse((await svc(['keys', 'list', '--json', '--name', 'fleet'], env())).stdout).keys[0].id;
    expect((await svc(['keys', 'rotate', fleet, '--overlap'], env())).exitCode).toBe(0);
    const { newId } = profile().pendingRotation;
    const result = await svc(['keys', 'rotate', '--cancel', '--json'], env());
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ change: 'revoke', changed: [{ id: newId, revoked: true }], alreadyGone: [], notFound: [], failed: [], notTried: [], incomplete: null });
    expect(await status(fleet)).toBe('enabled');
    expect((await svc(['keys', 'view', newId], env())).exitCode).toBe(4);
  });

  it('the interactive manager shows a pending rotation and finishes it', async () => {
    // Earlier tests may have spent this minute's requests (a 404 also looks for a key of that name): svc's waits move the server's clock on.
    const fleet = JSON.parse((await svc(['keys', 'list', '--json', '--name', 'fleet'], env(), { server })).stdout).keys[0].id;
    expect((await svc(['keys', 'rotate', fleet, '--overlap'], env(), { server })).exitCode).toBe(0);
    const prompter = scriptedPrompter([{ menu: 'Finish the pending rotation' }, { confirm: true }, { menu: null }]);
    const session = await svc([], env(), { tty: true, columns: 120, server, deps: { prompter } });
    expect(session.exitCode, session.stderr).toBe(0);
    expect(session.stderr).toContain('A rotation is pending');
    expect(prompter.asked[1]).toContain(`Revoke the old key ${fleet}?`);
    expect(session.stderr).toContain('the rotation to');
    expect(profile().pendingRotation).toBeUndefined();
  });

  it('the interactive manager reminds of a pending rotation after an action, as a command does', async () => {
    // Earlier tests spent this minute's requests: svc's waits move the server's clock on.
    const fleet = JSON.parse((await svc(['keys', 'list', '--json', '--name', 'fleet'], env(), { server })).stdout).keys[0].id;
    expect((await svc(['keys', 'rotate', fleet, '--overlap'], env(), { server })).exitCode).toBe(0);
    const prompter = scriptedPrompter([{ menu: 'Ping' }, { menu: null }]);
    const result = await svc([], env(), { tty: true, columns: 120, server, deps: { prompter } });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(shownText(result.stderr).match(/A rotation is pending/g)).toHaveLength(1);
    expect((await svc(['keys', 'rotate', '--cancel'], env(), { server })).exitCode).toBe(0);
  });
});
