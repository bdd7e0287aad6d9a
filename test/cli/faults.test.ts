// tier: in-process
/**
 * How svc meets failures (docs/contract.md §C4), each made by a fault rule
 * on the real reference server (docs/contract.md §B): the server is ours, and
 * what is under test is the client's retrying, waiting and stopping. svc
 * runs in-process with a fake sleep, so its backoff takes no time.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { svc, tempConfigDir } from '../helpers/in-process.js';
import { refusedUrl, startFaultServer } from '../helpers/fault-server.js';
import { useFaultyServer } from '../helpers/reference-faults.js';

const server = useFaultyServer();

async function keyNames(): Promise<string[]> {
  const result = await svc(['keys', 'list', '--json'], server.env);
  return JSON.parse(result.stdout).keys.map((k: { name: string }) => k.name);
}

describe('5xx and network errors on a read are retried', () => {
  it('retries through 5xx and succeeds, saying why it waited', async () => {
    await server.fault({ method: 'GET', path: '/user/api-keys', status: 503, code: 'INTERNAL', times: 2 });
    const result = await svc(['keys', 'list', '--json'], server.env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).keys.map((k: { name: string }) => k.name)).toEqual(['bootstrap']);
    expect(await server.seen()).toEqual(['GET /user/api-keys 503', 'GET /user/api-keys 503', 'GET /user/api-keys 200']);
    expect(result.stderr).toMatch(/Request failed \(503\); retrying in 0\.\d s\./);
  });

  it.each([
    ['an HTML page from a proxy', { status: 502, body: 'html' }, '502'],
    ['an empty body', { status: 504, body: 'empty' }, '504'],
    ['a reset connection', { then: 'reset' }, 'the connection was closed before an answer came'],
    ['a hang past --timeout', { then: 'hang' }, 'no answer within 300 ms'],
  ])('retries %s', async (_, rule, why) => {
    const [added] = await server.fault({ method: 'GET', ...rule });
    const result = await svc(['keys', 'list', '--timeout', '300'], server.env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain(`Request failed (${why}); retrying in`);
    const log = await server.requests();
    expect(log.map((r) => r.fault)).toEqual([added!.id, null]);
    expect(log[1]!.status).toBe(200);
  });

  it('gives up after four retries with exit 1, the server\'s words in the message', async () => {
    await server.fault({ status: 500, times: 0 });
    const result = await svc(['keys', 'list'], server.env);
    expect(result.exitCode).toBe(1);
    expect(await server.seen()).toEqual(Array(5).fill('GET /user/api-keys 500'));
    expect(result.stderr).toContain('failed (500 INTERNAL): Internal Server Error (a fault injected by the reference server)');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  }, 30_000);

  it('is slowed, not failed, by a delay within --timeout', async () => {
    await server.fault({ method: 'GET', delayMs: 400 });
    const result = await svc(['keys', 'list', '--timeout', '5000'], server.env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    const [entry] = await server.requests();
    expect(entry!.ms).toBeGreaterThanOrEqual(395);
  });

  it('fails at once on a connection this machine refused (nothing listens there), exit 1 and a hint', async () => {
    const result = await svc(['keys', 'create', 'ci'], { ...server.env, SVC_BASE_URL: await refusedUrl() });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).not.toContain('retrying in');
    expect(result.slept).toEqual([]);
    expect(result.stderr).toContain('connection refused');
    expect(result.stderr).toContain('Is the server running?');
    expect(result.stderr).toContain('svc serve --local');
  });
});

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

describe('a revoke or disable whose answer was lost', () => {
  it.each([
    ['reset', { then: 'reset' }, null],
    ['502', { status: 502, body: 'html' }, 502],
  ])('a revoke done but answered by a %s is retried, finds it gone, and says so without claiming it revoked it, exit 0', async (_, rule, status) => {
    const created = JSON.parse((await svc(['keys', 'create', 'old', '--json'], server.env)).stdout);
    await server.fault({ method: 'DELETE', after: true, ...rule });
    const result = await svc(['keys', 'revoke', created.id, '--yes'], server.env);
    expect(result.exitCode, result.stderr).toBe(0);
    // Without a list svc cannot tell its own lost success from an id that never was (issue 36).
    expect(result.stderr).toContain(`${created.id} is gone: the answer to its revoke was lost and the retry found no such key`);
    // Then one look at the list, for a key that has the argument for its name.
    expect((await server.seen()).filter((line) => line.startsWith('DELETE')).slice(-2)).toEqual([
      `DELETE /user/api-keys/${created.id} ${status}`,
      `DELETE /user/api-keys/${created.id} 404`,
    ]);
    expect(await keyNames()).toEqual(['bootstrap']);
  });

  it('a disable done but unanswered: the retry finds it done and reports the change', async () => {
    const created = JSON.parse((await svc(['keys', 'create', 'old', '--json'], server.env)).stdout);
    await server.fault({ method: 'PATCH', then: 'hang', after: true });
    const result = await svc(['keys', 'disable', created.id, '--timeout', '300'], server.env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain(`Disabled ${created.id}`);
    const patches = (await server.seen()).filter((line) => line.startsWith('PATCH'));
    expect(patches).toEqual([`PATCH /user/api-keys/${created.id} null`, `PATCH /user/api-keys/${created.id} 204`]);
  });
});

describe('429', () => {
  it.each([
    ['seconds', '1'],
    ['an HTTP-date in the past', 'Wed, 21 Oct 2015 07:28:00 GMT'],
    ['junk', 'soon-ish'],
    ['nothing', null],
  ])('RATE_LIMITED with Retry-After as %s: waits and retries', async (_, retryAfter) => {
    await server.fault({ method: 'GET', status: 429, retryAfter });
    const result = await svc(['keys', 'list'], server.env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/Rate limited; retrying in [12] s\./);
    expect(await server.seen()).toEqual(['GET /user/api-keys 429', 'GET /user/api-keys 200']);
  });

  it('RATE_LIMITED with --no-wait: exit 5 at once', async () => {
    await server.fault({ status: 429, retryAfter: '30' });
    const result = await svc(['keys', 'list', '--no-wait'], server.env);
    expect(result.exitCode).toBe(5);
    expect(result.stderr).toContain('--no-wait was given');
    expect(await server.seen()).toEqual(['GET /user/api-keys 429']);
  });

  it('RATE_LIMITED asking for more than --max-wait: stops rather than waits', async () => {
    await server.fault({ status: 429, retryAfter: '120' });
    const result = await svc(['keys', 'list', '--max-wait', '10'], server.env);
    expect(result.exitCode).toBe(5);
    expect(await server.seen()).toEqual(['GET /user/api-keys 429']);
  });

  it('with another code: an ordinary failure, not retried', async () => {
    await server.fault({ status: 429, code: 'QUOTA', retryAfter: '1' });
    const result = await svc(['keys', 'list'], server.env);
    expect(result.exitCode).toBe(1);
    expect(await server.seen()).toEqual(['GET /user/api-keys 429']);
  });

  it('with no code (the spec makes it optional): waited out like RATE_LIMITED', async () => {
    await server.fault({ method: 'GET', status: 429, code: null, retryAfter: '1' });
    const result = await svc(['keys', 'list'], server.env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain('Rate limited; retrying in 2 s.');
    expect(await server.seen()).toEqual(['GET /user/api-keys 429', 'GET /user/api-keys 200']);
  });
});

describe('a server that is not the reference server', () => {
  const config = tempConfigDir();
  afterAll(() => config.remove());

  it('reports a 200 that is not JSON as an unexpected response', async () => {
    const other = await startFaultServer((_req, res) => res.end('<html>hello</html>'));
    const result = await svc(['keys', 'list'], { SVC_API_KEY: `sk_${'F'.repeat(64)}`, SVC_BASE_URL: other.url, SVC_CONFIG_DIR: config.dir });
    await other.close();
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('Unexpected response');
  });
});
