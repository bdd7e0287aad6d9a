// tier: in-process
/**
 * How svc meets failures (docs/contract.md §C4), each made by a fault rule
 * on the real reference server (docs/contract.md §B): the server is ours, and
 * what is under test is the client's retrying, waiting and stopping. svc
 * runs in-process with a fake sleep, so its backoff takes no time.
 */
import { describe, expect, it } from 'vitest';
import { svc } from '../../helpers/in-process.js';
import { useFaultyServer } from '../../helpers/reference-faults.js';

const server = useFaultyServer();

async function keyNames(): Promise<string[]> {
  const result = await svc(['keys', 'list', '--json'], server.env);
  return JSON.parse(result.stdout).keys.map((k: { name: string }) => k.name);
}

describe('a create is never retried', () => {
  it('a reset connection: says it may have reached the server, and that svc could not look', async () => {
    await server.fault({ then: 'reset', times: 0 });
    const result = await svc(['keys', 'create', 'ci'], server.env);
    expect(result.exitCode).toBe(1);
    // After the POST, only reads: svc looking for a key the create may have made, each read retried, each reset by the same fault.
    const [post, ...looks] = await server.seen();
    expect(post).toBe('POST /user/api-keys null');
    expect(looks.length).toBeGreaterThan(1);
    expect(new Set(looks)).toEqual(new Set(['GET /user/api-keys null']));
    expect(result.stderr).toContain('may have reached the server');
    expect(result.stderr).toContain('svc could not look for it');
    expect(result.stderr).toContain('svc keys list --name ci');
  });

  it('a 502 that did nothing: svc looks until the create must have settled, finds no key, and says so', async () => {
    await server.fault({ method: 'POST', status: 502, code: null });
    const result = await svc(['keys', 'create', 'ci'], server.env);
    expect(result.exitCode).toBe(1);
    const [post, ...looks] = await server.seen();
    expect(post).toBe('POST /user/api-keys 502');
    expect(new Set(looks)).toEqual(new Set(['GET /user/api-keys 200']));
    expect(result.stderr).toContain("No key named 'ci' made since the request began is in the list yet");
    expect(result.stderr).toMatch(new RegExp(`svc looked ${looks.length} times, until 65 s after the failure, when the create must have settled`));
    // The waits between looks: soon at first, then every 8 s, none past the window.
    expect(result.slept.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(65_000);
    expect(await keyNames()).toEqual(['bootstrap']);
  });

  it('--no-wait: one look', async () => {
    await server.fault({ method: 'POST', status: 502, code: null });
    const result = await svc(['keys', 'create', 'ci', '--no-wait'], server.env);
    expect(result.exitCode).toBe(1);
    expect(await server.seen()).toEqual(['POST /user/api-keys 502', 'GET /user/api-keys 200']);
    expect(result.stderr).toContain('svc looked once: --no-wait lets it wait for no second look.');
    expect(result.slept).toEqual([]);
  });

  it('a hang past --timeout that did nothing: the same', async () => {
    await server.fault({ method: 'POST', then: 'hang' });
    const result = await svc(['keys', 'create', 'slow', '--timeout', '300'], server.env);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('no answer within 300 ms');
    expect(result.stderr).toContain('it was not retried');
    expect(result.stderr).toContain("No key named 'slow' made since the request began is in the list yet");
  });

  it.each([
    ['a 503 after the key was made', { status: 503 }],
    ['a reset after the key was made', { then: 'reset' }],
    ['a hang after the key was made', { then: 'hang' }],
  ])('%s, under a name anyone may send: lists the key as one svc cannot tell for its own, revokes nothing; one key, not two', async (_, rule) => {
    await server.fault({ method: 'POST', after: true, ...rule });
    const result = await svc(['keys', 'create', 'lost', '--timeout', '300'], server.env);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.replace(/\s+/g, ' ')).toContain("A key named 'lost' was made since the request began, and svc cannot tell whether it is the one this create made");
    expect(result.stderr).toMatch(/svc keys revoke key_[a-z0-9]+/);
    expect(result.stderr).not.toMatch(/sk_[A-Za-z0-9]{5,}/);
    expect((await keyNames()).filter((name) => name === 'lost')).toHaveLength(1);
    expect((await server.seen()).some((r) => r.startsWith('DELETE'))).toBe(false);
  });

  it.each([
    ['a 503 after the key was made', { status: 503 }],
    ['a reset after the key was made', { then: 'reset' }],
  ])('%s, with an expiry svc computed: svc tells its own key by it and revokes it at once', async (_, rule) => {
    await server.fault({ method: 'POST', after: true, ...rule });
    const result = await svc(['keys', 'create', 'lost', '--expires-in', '1d'], server.env);
    expect(result.exitCode).toBe(1);
    const id = /(key_[a-z0-9]+) {2}created \S+ {2}revoked now: nobody could use it/.exec(result.stderr)?.[1];
    expect(id, result.stderr).toBeDefined();
    expect(await server.seen()).toContain(`DELETE /user/api-keys/${id} 200`);
    expect(await keyNames()).not.toContain('lost');
  });
});
