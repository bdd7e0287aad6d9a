// tier: in-process
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startLocalServer, svc, tempConfigDir, type LocalServer } from '../helpers/in-process.js';
import { records, startSpecServer, type SpecServer } from '../helpers/spec-server.js';
import { scriptedPrompter } from '../helpers/prompter.js';
import { shownText } from '../helpers/shown-text.js';

// docs/contract.md §C8: see what expires, clean up what is dead, rotate without a
// gap. Time moves on the reference server's clock, never by sleeping.

const DAY = 86_400_000;

async function serverNow(server: LocalServer): Promise<number> {
  return Date.parse((await call(server.url, 'GET', '/_local/clock', server.adminToken)).json.now);
}

async function advance(server: LocalServer, ms: number): Promise<void> {
  await call(server.url, 'POST', '/_local/clock', server.adminToken, { advanceSeconds: ms / 1000 });
}

describe('list filters, view and prune', () => {
  let server: LocalServer;
  const config = tempConfigDir();
  const env = () => ({ SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey!, SVC_CONFIG_DIR: config.dir });
  const ids: Record<string, string> = {};
  const create = async (name: string, expiresAt?: number) => {
    const args = ['keys', 'create', name, '--json', ...(expiresAt ? ['--expires-at', new Date(expiresAt).toISOString()] : [])];
    const result = await svc(args, env());
    expect(result.exitCode, result.stderr).toBe(0);
    ids[name] = JSON.parse(result.stdout).id;
  };

  beforeAll(async () => {
    server = await startLocalServer({ plan: 'pro' });
    await create('expired-key', (await serverNow(server)) + 3_600_000);
    await advance(server, 2 * 3_600_000);
    const now = await serverNow(server);
    await create('soon', now + DAY);
    // Just inside: a Date header has whole seconds, so the exact edge is the unit tests' (key-filters).
    await create('edge', now + 7 * DAY - 5_000);
    await create('later', now + 7 * DAY + 3_600_000);
    await create('forever');
    await create('off');
    expect((await svc(['keys', 'disable', ids.off!], env())).exitCode).toBe(0);
  });
  afterAll(async () => {
    await server.stop();
    config.remove();
  });

  const listed = async (...args: string[]) => {
    const result = await svc(['keys', 'list', '--json', ...args], env());
    expect(result.exitCode, result.stderr).toBe(0);
    return (JSON.parse(result.stdout).keys as { name: string }[]).map((k) => k.name).sort();
  };

  it('--expiring takes what expires within it, expired keys included', async () => {
    expect(await listed('--expiring', '7d')).toEqual(['edge', 'expired-key', 'soon']);
    expect(await listed('--expiring', '2d')).toEqual(['expired-key', 'soon']);
  });

  it('--status and --name, alone and combined with --expiring', async () => {
    expect(await listed('--status', 'disabled')).toEqual(['off']);
    expect(await listed('--status', 'expired')).toEqual(['expired-key']);
    expect(await listed('--name', 'ED')).toEqual(['edge', 'expired-key']);
    expect(await listed('--expiring', '7d', '--name', 'e', '--status', 'enabled')).toEqual(['edge']);
    const bad = await svc(['keys', 'list', '--status', 'gone'], env());
    expect(bad.exitCode).toBe(2);
  });

  it('--json keeps the API\'s shape; piped rows follow the filter too', async () => {
    const result = await svc(['keys', 'list', '--json', '--name', 'forever'], env());
    expect(Object.keys(JSON.parse(result.stdout))).toEqual(['keys']);
    const tsv = await svc(['keys', 'list', '--status', 'disabled'], env());
    expect(tsv.stdout.split('\n').slice(1)).toEqual([expect.stringContaining(`${ids.off}\toff\t`)]);
  });

  it('keys view shows one record, as TSV fields or as the server\'s JSON; an unknown id is exit 4', async () => {
    const tsv = await svc(['keys', 'view', ids.soon!], env());
    expect(tsv.exitCode).toBe(0);
    expect(tsv.stdout).toContain(`id\t${ids.soon}\nname\tsoon\n`);
    expect(tsv.stdout).toMatch(/\nexpires\t\d{4}-\d\d-\d\dT/);
    const json = JSON.parse((await svc(['keys', 'view', ids.soon!, '--json'], env())).stdout);
    expect(json).toMatchObject({ id: ids.soon, name: 'soon', status: 'enabled' });
    expect((await svc(['keys', 'view', 'key_nope'], env())).exitCode).toBe(4);
  });

  it('prune needs a criterion, lists with --dry-run, needs --yes without a terminal', async () => {
    expect((await svc(['keys', 'prune'], env())).exitCode).toBe(2);
    const dry = await svc(['keys', 'prune', '--expired', '--dry-run'], env());
    expect(dry.exitCode).toBe(0);
    expect(dry.stdout).toContain(ids['expired-key']);
    expect(dry.stderr).toContain('would be revoked');
    const noYes = await svc(['keys', 'prune', '--expired'], env());
    expect(noYes.exitCode).toBe(2);
    expect(await listed('--status', 'expired')).toEqual(['expired-key']);
  });

  it('prune revokes what matches every criterion, and reports it in --json', async () => {
    const both = await svc(['keys', 'prune', '--expired', '--disabled', '--yes', '--json'], env());
    expect(JSON.parse(both.stdout).revoked).toEqual([]);
    const result = await svc(['keys', 'prune', '--disabled', '--yes', '--json'], env());
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ revoked: [ids.off], failed: [] });
    const expired = await svc(['keys', 'prune', '--expired', '--yes'], env());
    expect(expired.stderr).toContain(`Revoked ${ids['expired-key']}`);
    expect(await listed()).toEqual(['bootstrap', 'edge', 'forever', 'later', 'soon']);
  });

  it('prune --unused-for goes by last use, or creation for a key never used', async () => {
    await advance(server, 100 * DAY);
    const result = await svc(['keys', 'prune', '--unused-for', '90d', '--yes', '--json'], env());
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).revoked).toHaveLength(4);
    expect(await listed()).toEqual(['bootstrap']);
  });
});

describe('prune never touches the key in use', () => {
  let server: SpecServer;
  beforeAll(async () => {
    // A server that never says a key was used: every key looks unused.
    server = await startSpecServer({ record: (k, now) => ({ ...records.full(k, now), lastUsedAt: null, createdAt: '2020-01-01T00:00:00.000Z' }) });
    server.addKey('stale');
    server.addKey('also-stale');
  });
  afterAll(() => server.close());

  it('leaves it alone and says so; a failed revoke is exit 1', async () => {
    const env = { SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey };
    server.rules.push({ method: 'DELETE', times: 1, work: false, then: { status: 400, body: '{"error":"not now"}' } });
    const result = await svc(['keys', 'prune', '--unused-for', '30d', '--yes'], env);
    expect(result.stderr).toContain('it is the key svc is using');
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('1 of 2 keys could not be revoked');
    expect(server.keys.size).toBe(2);
    expect([...server.keys.values()].some((k) => k.secret === server.apiKey)).toBe(true);
  });
});

describe('the expiry warning for the key in use', () => {
  let server: LocalServer;
  const config = tempConfigDir();
  let expiring: string;
  beforeAll(async () => {
    server = await startLocalServer();
    const created = await svc(['keys', 'create', 'short-lived', '--expires-in', '3d'], { SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey!, SVC_CONFIG_DIR: config.dir });
    expiring = created.stdout;
  });
  afterAll(async () => {
    await server.stop();
    config.remove();
  });
  const env = (extra: Record<string, string> = {}) => ({ SVC_BASE_URL: server.url, SVC_API_KEY: expiring, SVC_CONFIG_DIR: config.dir, ...extra });
  const warnings = (stderr: string) => stderr.split('\n').filter((line) => line.includes('The key in use'));

  it('says once, on stderr, when the key expires within 7 days, and what to run', async () => {
    const result = await svc(['keys', 'list'], env());
    expect(warnings(result.stderr)).toEqual([expect.stringMatching(/The key in use \(sk_.{4}….{4}\) expires in 3 days \(.*\): replace it with `svc keys rotate key_\w+`/)]);
    const json = await svc(['keys', 'list', '--json'], env());
    expect(() => JSON.parse(json.stdout)).not.toThrow();
    expect(warnings(json.stderr)).toHaveLength(1);
  });

  it('the interactive manager shows it on its screen, at start and after every action, once on the terminal', async () => {
    const prompter = scriptedPrompter([{ menu: 'Ping' }, { menu: null }]);
    const result = await svc([], env(), { tty: true, columns: 200, rows: 30, deps: { prompter } });
    expect(result.exitCode, result.stderr).toBe(0);
    // Drawn with each of the two screens, before each menu; the first screen was cleared for the second.
    expect(warnings(result.stderr)).toHaveLength(2);
    expect(warnings(result.stderr)[0]).toMatch(/The key in use \(sk_.{4}….{4}\) expires in 3 days \(.*\): replace it with `svc keys rotate key_\w+`/);
    expect(result.stderr.indexOf('The key in use')).toBeLessThan(result.stderr.indexOf('Key sk_'));
    expect(warnings(shownText(result.stderr))).toHaveLength(1);
  });

  it('names the profile in the command to run when --profile chose it', async () => {
    const result = await svc(['keys', 'list', '--profile', 'soon'], env());
    expect(warnings(result.stderr)).toEqual([expect.stringMatching(/replace it with `svc keys rotate key_\w+ --profile soon`\.$/)]);
  });

  it('is silent under --quiet, with SVC_EXPIRY_WARNING_DAYS=0, and past its threshold', async () => {
    expect(warnings((await svc(['keys', 'list', '--quiet'], env())).stderr)).toEqual([]);
    expect(warnings((await svc(['keys', 'list'], env({ SVC_EXPIRY_WARNING_DAYS: '0' }))).stderr)).toEqual([]);
    expect(warnings((await svc(['keys', 'list'], env({ SVC_EXPIRY_WARNING_DAYS: '2' }))).stderr)).toEqual([]);
    expect(warnings((await svc(['keys', 'list'], env({ SVC_EXPIRY_WARNING_DAYS: '3' }))).stderr)).toHaveLength(1);
  });

  it('reaches svc status, for a key from SVC_API_KEY that no profile remembers', async () => {
    const fresh = tempConfigDir();
    try {
      const result = await svc(['status'], { SVC_BASE_URL: server.url, SVC_API_KEY: expiring, SVC_CONFIG_DIR: fresh.dir });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(warnings(result.stderr)).toEqual([expect.stringMatching(/The key in use \(sk_.{4}….{4}\) expires in 3 days/)]);
    } finally {
      fresh.remove();
    }
  });

  it('reaches the interactive manager after each action, as after a command', async () => {
    const prompter = scriptedPrompter([{ menu: 'Ping' }, { menu: 'Refresh' }]);
    const result = await svc([], env(), { tty: true, columns: 120, rows: 60, deps: { prompter } });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(warnings(shownText(result.stderr))).toHaveLength(1);
  });

  it('reaches commands that read no list, for a key saved in the profile', async () => {
    const login = await svc(['login', '--with-key'], { SVC_BASE_URL: server.url, SVC_CONFIG_DIR: config.dir }, { input: expiring });
    expect(login.exitCode, login.stderr).toBe(0);
    const created = await svc(['keys', 'create', 'another'], { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: server.url });
    expect(created.exitCode).toBe(0);
    expect(warnings(created.stderr)).toHaveLength(1);
  });
});

describe('rotate --overlap, --finish and --cancel', () => {
  let server: LocalServer;
  const config = tempConfigDir();
  const env = () => ({ SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: server.url });
  const profile = () => JSON.parse(readFileSync(join(config.dir, 'config.json'), 'utf8')).profiles.default;
  let oldId: string;
  beforeAll(async () => {
    server = await startLocalServer();
    expect((await svc(['login', '--with-key'], env(), { input: server.apiKey! })).exitCode).toBe(0);
    oldId = JSON.parse((await svc(['keys', 'create', 'fleet', '--json'], env())).stdout).id;
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
    expect(JSON.parse(result.stdout)).toEqual({ id: newId, revoked: true });
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
