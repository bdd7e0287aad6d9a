// tier: in-process
import { afterEach, describe, expect, it } from 'vitest';
import { records, startSpecServer, type SpecServer, type Variation } from '../../helpers/spec-server.js';
import { svc, tempConfigDir } from '../../helpers/in-process.js';
import { scriptedPrompter } from '../../helpers/prompter.js';

/** What a garbled answer may hold: a value shaped like a key, which svc cannot tell for the secret or not. */
const GARBLED_SECRET = `sk_${'Gq7'.repeat(21)}x`;

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

describe('a create that may have made a key nobody saw', () => {
  it('a dropped answer: names the key made and the command to revoke it, exit 1', async () => {
    const e = await env();
    server.rules.push({ method: 'POST', times: 1, then: 'drop' });
    const result = await svc(['keys', 'create', 'ci'], e);
    const orphan = [...server.keys.values()].find((k) => k.name === 'ci')!;
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('may have reached the server');
    expect(result.stderr).toContain(`svc keys revoke ${orphan.id}`);
    expect(result.stderr).not.toContain('Run `svc keys list`');
    expect(server.seen.filter((r) => r.startsWith('POST'))).toHaveLength(1);
  });

  it('a server that writes whole seconds: the key made at :17.8, listed as made at :17, is found for a request begun at :17.7', async () => {
    // One clock for svc and the server, moved by the test alone: the create lands 100 ms after svc began it.
    let clock = Date.parse('2026-11-28T12:00:17.700Z');
    const e = await env({
      record: records.snakeEpochSeconds,
      now: () => clock,
      onRequest: (method) => {
        if (method === 'POST') clock += 100;
      },
    });
    server.rules.push({ method: 'POST', times: 1, then: 'drop' });
    const result = await svc(['keys', 'create', 'ci'], e, { deps: { now: () => clock } });
    const orphan = [...server.keys.values()].find((k) => k.name === 'ci')!;
    expect(orphan.createdAt).toBe(Date.parse('2026-11-28T12:00:17.800Z'));
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`svc keys revoke ${orphan.id}`);
    expect(result.stderr).not.toContain('No key named');
  });

  it('a 500 after the work: the same, and a same-named key made seconds earlier is not blamed', async () => {
    const e = await env();
    const older = await keyNamed(e, 'ci');
    older.createdAt -= 3_000;
    server.rules.push({ method: 'POST', times: 1, then: { status: 500, body: '{"error":"boom"}' } });
    const result = await svc(['keys', 'create', 'ci'], e);
    const orphan = [...server.keys.values()].find((k) => k.name === 'ci' && k.id !== older.id)!;
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('failed (500)');
    expect(result.stderr).toContain(`svc keys revoke ${orphan.id}`);
    expect(result.stderr).not.toContain(older.id);
  });

  it('a 201 whose body is not JSON but holds what may be the secret: what came is printed on stdout, the key is named', async () => {
    const e = await env();
    server.rules.push({ method: 'POST', times: 1, then: { status: 201, body: `created, secret: ${GARBLED_SECRET}\n` } });
    const result = await svc(['keys', 'create', 'ci', '--expires-in', '30d'], e);
    const orphan = [...server.keys.values()].find((k) => k.name === 'ci')!;
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe(`created, secret: ${GARBLED_SECRET}`);
    expect(result.stderr).toContain('its secret may be in the answer printed above');
    expect(result.stderr).toContain(`svc keys revoke ${orphan.id}`);
  });

  it('a 201 whose body holds nothing shaped like a key (an HTML page): nobody has the secret, so its key, told by its mark, is revoked', async () => {
    const e = await env();
    server.rules.push({ method: 'POST', times: 1, then: { status: 201, body: '<html><body>Created</body></html>\n' } });
    const result = await svc(['keys', 'create', 'html-answer', '--expires-in', '30d', '--json'], e);
    expect(result.exitCode).toBe(1);
    expect([...server.keys.values()].filter((k) => k.name === 'html-answer')).toEqual([]);
    expect(JSON.parse(result.stdout).error.orphans).toEqual([expect.objectContaining({ revoked: true })]);
  });

  it('a 502 that did nothing: says no key appeared', async () => {
    const e = await env();
    server.rules.push({ method: 'POST', times: 1, then: { status: 502, body: '' }, work: false });
    const result = await svc(['keys', 'create', 'ci'], e);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("No key named 'ci' made since the request began is in the list yet");
    expect(result.stderr).toContain('check `svc keys list --name ci` in a minute');
    expect([...server.keys.values()].some((k) => k.name === 'ci')).toBe(false);
  });

  it('rotate whose create answer was lost leaves the old key alone, and names only the key it made, revoking nothing it cannot tell', async () => {
    const e = await env();
    const old = await keyNamed(e, 'app');
    server.rules.push({ method: 'POST', times: 1, then: 'drop' });
    const result = await svc(['keys', 'rotate', '--yes', old.id], e);
    const orphan = [...server.keys.values()].find((k) => k.name === 'app' && k.id !== old.id)!;
    expect(result.exitCode).toBe(1);
    expect(server.keys.get(old.id)!.enabled).toBe(true);
    expect(server.seen.some((r) => r.startsWith('DELETE'))).toBe(false);
    // The old key has the same name and was made a moment before: it is still the key being rotated.
    expect(result.stderr.replace(/\s+/g, ' ')).toContain("A key named 'app' was made since the request began, and svc cannot tell whether it is the one this create made");
    expect(result.stderr).toContain(`svc keys revoke ${orphan.id}`);
    expect(result.stderr).not.toContain(`svc keys revoke ${old.id}`);
  });

  it('rotate of an expired key, whose new expiry svc computes and marks: the key it made is revoked, the old one left alone', async () => {
    const e = await env();
    const old = await keyNamed(e, 'app');
    old.createdAt -= 7_200_000;
    old.expiresAt = Date.now() - 3_600_000;
    server.rules.push({ method: 'POST', times: 1, then: 'drop' });
    const result = await svc(['keys', 'rotate', '--yes', old.id], e);
    expect(result.exitCode).toBe(1);
    expect([...server.keys.values()].filter((k) => k.name === 'app').map((k) => k.id)).toEqual([old.id]);
    expect(server.seen.filter((r) => r.startsWith('DELETE'))).toHaveLength(1);
    expect(result.stderr).toMatch(/created \S+ {2}revoked now: nobody could use it/);
  });

  it('on a terminal, a lost answer with the mark of an expiry svc computed: svc revokes the key at once, asking nothing', async () => {
    const e = await env();
    server.rules.push({ method: 'POST', times: 1, then: 'drop' });
    const prompter = scriptedPrompter([]);
    const result = await svc(['keys', 'create', 'laptop', '--expires-in', '30d'], e, { tty: true, deps: { prompter } });
    expect(prompter.asked).toEqual([]);
    expect(result.exitCode).toBe(1);
    const orphanId = /(\S+) {2}created \S+ {2}revoked now/.exec(result.stderr)![1]!;
    expect(server.keys.has(orphanId)).toBe(false);
    expect(server.seen).toContain(`DELETE /api/service/user/api-keys/${orphanId}`);
  });

  it('on a terminal, a lost answer without a mark: the key is listed, never offered', async () => {
    const e = await env();
    server.rules.push({ method: 'POST', times: 1, then: 'drop' });
    const prompter = scriptedPrompter([]);
    const result = await svc(['keys', 'create', 'laptop'], e, { tty: true, deps: { prompter } });
    expect(prompter.asked).toEqual([]);
    expect(result.exitCode).toBe(1);
    const orphan = [...server.keys.values()].find((k) => k.name === 'laptop')!;
    expect(result.stderr).toContain(`svc keys revoke ${orphan.id}`);
    expect(server.seen.some((r) => r.startsWith('DELETE'))).toBe(false);
  });

  it('on a terminal, a 201 svc cannot read, which may hold the secret: offers to revoke the key it made (its mark tells it), and does so on "y"', async () => {
    const e = await env();
    server.rules.push({ method: 'POST', times: 1, then: { status: 201, body: `created, secret: ${GARBLED_SECRET}\n` } });
    const prompter = scriptedPrompter([{ confirm: true }]);
    const result = await svc(['keys', 'create', 'laptop', '--expires-in', '30d'], e, { tty: true, deps: { prompter } });
    expect(prompter.asked[0]).toContain('Revoke it now?');
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe(`created, secret: ${GARBLED_SECRET}`);
    // The explanation is said before the question; after it, only what became of the key.
    const orphanId = result.stderr.match(/\nerror: The create failed: (\S+), the key it made, is revoked now\.$/)![1]!;
    expect(result.stderr.replace(/\s+/g, ' ')).toContain(`${orphanId} created `);
    expect(server.keys.has(orphanId)).toBe(false);
    expect(server.seen).toContain(`DELETE /api/service/user/api-keys/${orphanId}`);
  });
});

