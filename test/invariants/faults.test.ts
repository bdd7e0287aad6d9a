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
