// tier: in-process
import { afterEach, describe, expect, it } from 'vitest';
import { startSpecServer, type SpecServer, type Variation } from '../../helpers/spec-server.js';
import { svc, tempConfigDir } from '../../helpers/in-process.js';
import { scriptedPrompter } from '../../helpers/prompter.js';

// docs/contract.md §C4: the request reached the server and did its work, then the
// answer was lost (a dropped connection, a 5xx, a body that cannot be read).

const config = tempConfigDir();
let server: SpecServer;
afterEach(() => server.close());

async function env(variation: Variation = {}) {
  server = await startSpecServer(variation);
  return { SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey, SVC_CONFIG_DIR: config.dir };
}

async function keyNamed(environment: Record<string, string>, name: string) {
  expect((await svc(['keys', 'create', name], environment)).exitCode).toBe(0);
  return [...server.keys.values()].find((k) => k.name === name)!;
}

describe('a retried request whose first answer was lost', () => {
  // Without a list svc cannot tell the first attempt's success from an id that never was: it says the key is gone, not that it revoked it.
  it('revoke answered 404 on the retry: gone, and maybe never there, exit 0', async () => {
    const e = await env();
    const key = await keyNamed(e, 'old');
    server.rules.push({ method: 'DELETE', times: 1, then: 'drop' });
    const result = await svc(['keys', 'revoke', key.id, '--yes', '--json'], e);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout).changed).toEqual([{ id: key.id, revoked: true, unconfirmed: true }]);
    expect(result.stderr).toContain(`${key.id} is gone: the answer to its revoke was lost and the retry found no such key`);
    expect(result.stderr).not.toContain('Revoked');
    expect(server.seen.filter((r) => r.startsWith('DELETE'))).toHaveLength(2);
    expect(server.keys.has(key.id)).toBe(false);
  });

  it('revoke of an id that never existed, the first answer lost: never "Revoked"', async () => {
    const e = await env();
    server.rules.push({ method: 'DELETE', times: 1, then: { status: 502, body: '' } });
    const result = await svc(['keys', 'revoke', 'key_typo0000', '--yes'], e);
    expect(result.stderr).not.toContain('Revoked');
    expect(result.stderr).toContain('no key ever had this id');
  });

  it('revoke confirmed on a terminal, answered 502 after doing the work, then 404: revoked, since the list showed the key', async () => {
    const e = await env();
    const key = await keyNamed(e, 'old');
    server.rules.push({ method: 'DELETE', times: 1, then: { status: 502, body: '' } });
    const prompter = scriptedPrompter([{ confirm: true }]);
    const result = await svc(['keys', 'revoke', key.id], e, { tty: true, deps: { prompter } });
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain(`Revoked 'old' (${key.id})`);
    expect(server.keys.has(key.id)).toBe(false);
  });

  it('revoke of the key svc uses, its answer lost: the 401 to the retry says the key stopped working and may be the one revoked, exit 3', async () => {
    const e = await env();
    const own = [...server.keys.values()].find((k) => k.secret === server.apiKey)!;
    server.rules.push({ method: 'DELETE', times: 1, then: 'drop' });
    const result = await svc(['keys', 'revoke', own.id, '--yes'], e);
    expect(result.exitCode).toBe(3);
    expect(server.keys.has(own.id)).toBe(false);
    expect(result.stderr).toContain(`The revoke of ${own.id} was sent, its answer was lost, and the retry was refused as unauthenticated (401)`);
    expect(result.stderr).toContain(`If ${own.id} is that key, it is revoked.`);
    expect(result.stderr).not.toContain('run svc login');
  });

  it('a 404 on the first attempt is still "not found", exit 4', async () => {
    const e = await env();
    const result = await svc(['keys', 'revoke', 'nosuchkey', '--yes'], e);
    expect(result.exitCode).toBe(4);
  });

  it('disable answered 204 on the retry reports the change it made, not "already"', async () => {
    const e = await env();
    const key = await keyNamed(e, 'worker');
    server.rules.push({ method: 'PATCH', times: 1, then: 'drop' });
    const result = await svc(['keys', 'disable', key.id], e);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain(`Disabled ${key.id}`);
    expect(result.stderr).not.toContain('already');
    expect(server.keys.get(key.id)!.enabled).toBe(false);
  });
});

