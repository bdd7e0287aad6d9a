// tier: in-process
import { describe, expect, it } from 'vitest';
import { ApiClient, type WaitEvent } from '../../src/client/api.js';
import { ApiError, NetworkError, RateLimitedError, UnexpectedResponseError } from '../../src/client/errors.js';
import { DEFAULT_POLICY, type RetryPolicy } from '../../src/client/policy.js';
import { TransportError } from '../../src/client/errors.js';
import type { HttpRequest, HttpResponse } from '../../src/client/transport.js';

const KEY = `sk_${'a'.repeat(60)}WXYZ`;
type Scripted = HttpResponse | TransportError;

function json(status: number, body: unknown, headers: Record<string, string> = {}): HttpResponse {
  return { status, headers, text: body === undefined ? '' : JSON.stringify(body) };
}

function harness(script: Scripted[], policy: Partial<RetryPolicy> = {}, deadlineMs?: number, clock: { waitUntilMs?: number; requestMs?: number } = {}) {
  const requests: HttpRequest[] = [];
  const waits: WaitEvent[] = [];
  const log: string[] = [];
  // A clock that moves only when the client waits: the deadline is read against it.
  let nowMs = 1_000_000;
  const client = new ApiClient({
    deadlineMs: deadlineMs === undefined ? undefined : 1_000_000 + deadlineMs,
    waitUntilMs: clock.waitUntilMs === undefined ? undefined : 1_000_000 + clock.waitUntilMs,
    now: () => nowMs,
    baseUrl: 'http://svc.test/',
    apiKey: KEY,
    timeoutMs: 1234,
    policy: { ...DEFAULT_POLICY, ...policy },
    userAgent: 'svc/test',
    transport: async (req) => {
      requests.push(req);
      nowMs += clock.requestMs ?? 0;
      const next = script.shift();
      if (!next) throw new Error('transport called more often than scripted');
      if (next instanceof TransportError) throw next;
      return next;
    },
    wait: async (event) => {
      waits.push(event);
      nowMs += event.ms;
    },
    log: (line) => log.push(line),
    random: () => 0.5,
    origin: { baseUrl: 'http://svc.test', baseUrlSource: 'flag', overriddenBaseUrl: null, keyHint: 'sk_…WXYZ', keySource: 'env', profile: 'default' },
  });
  return { client, requests, waits, log };
}

const rateLimited = (retryAfter?: string) =>
  json(429, { error: 'Rate limit exceeded: try later', code: 'RATE_LIMITED' }, retryAfter ? { 'retry-after': retryAfter } : {});

describe('ApiClient under the §C4 policies', () => {
  it('sends the bearer key, JSON headers and the timeout', async () => {
    const { client, requests } = harness([json(201, { id: 'key_1', secret: KEY })]);
    await client.createKey({ name: 'ci' });
    expect(requests[0]).toMatchObject({
      method: 'POST',
      url: 'http://svc.test/api/service/user/api-keys',
      body: '{"name":"ci"}',
      timeoutMs: 1234,
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', accept: 'application/json' },
    });
  });

  it('never retries a 401', async () => {
    const { client, requests, waits } = harness([json(401, { error: 'Unauthorized: authentication failed', code: 'UNAUTHORIZED' })]);
    const error = await client.probeKeyList().catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(401);
    expect(requests).toHaveLength(1);
    expect(waits).toHaveLength(0);
  });

  it('sleeps through Retry-After on 429 RATE_LIMITED (with jitter, here 500 ms), then succeeds', async () => {
    const { client, waits } = harness([rateLimited('12'), rateLimited(), json(200, { keys: [] })]);
    const res = await client.probeKeyList();
    expect(res.body).toEqual({ keys: [] });
    expect(waits).toEqual([
      { reason: 'rate-limit', ms: 12_500, cause: '429', stoppable: true },
      { reason: 'rate-limit', ms: 1_500, cause: '429', stoppable: true },
    ]);
  });

  it('sleeps through RateLimit-Reset when a 429 has no Retry-After', async () => {
    const limited = { ...rateLimited(), headers: { 'ratelimit-reset': '9' } };
    const { client, waits } = harness([limited, json(200, { keys: [] })]);
    await client.probeKeyList();
    expect(waits).toEqual([{ reason: 'rate-limit', ms: 9_500, cause: '429', stoppable: true }]);
  });

  it('fails with RateLimitedError at once under --no-wait', async () => {
    const { client, waits } = harness([rateLimited('7')], { waitOnRateLimit: false });
    const error = await client.probeKeyList().catch((e) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error).toMatchObject({ reason: 'no-wait', retryAfterSeconds: 7, waitedSeconds: 0 });
    expect(waits).toHaveLength(0);
  });

  it('gives up when the next wait would pass --max-wait', async () => {
    const { client, waits } = harness([rateLimited('40'), rateLimited('40')], { maxWaitSeconds: 60 });
    const error = await client.probeKeyList().catch((e) => e);
    // 40 s asked, and the 500 ms of jitter on top.
    expect(error).toMatchObject({ reason: 'budget', waitedSeconds: 41 });
    expect(waits).toHaveLength(1);
  });

  it('waits out a 429 whose body has no code, or is no JSON at all, as a rate limit', async () => {
    for (const body of [{ error: 'Too many requests' }, undefined]) {
      const limited: HttpResponse = { status: 429, headers: { 'retry-after': '2' }, text: body === undefined ? '<html>slow down</html>' : JSON.stringify(body) };
      const { client, waits } = harness([limited, json(200, { keys: [] })]);
      expect((await client.probeKeyList()).status).toBe(200);
      expect(waits).toEqual([{ reason: 'rate-limit', ms: 2_500, cause: '429', stoppable: true }]);
    }
  });

  it('treats a 429 with another code than RATE_LIMITED as an ordinary error', async () => {
    const { client, waits } = harness([json(429, { error: 'Too many', code: 'QUOTA' }, { 'retry-after': '1' })]);
    const error = await client.probeKeyList().catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(waits).toHaveLength(0);
  });

  it('backs off on 5xx for reads: 500 ms doubling, four retries at most', async () => {
    const { client, waits, requests } = harness(Array.from({ length: 5 }, () => json(503, { error: 'down', code: 'INTERNAL' })));
    const error = await client.probeKeyList().catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(503);
    expect(requests).toHaveLength(5);
    expect(waits.map((w) => w.ms)).toEqual([500, 1000, 2000, 4000]);
  });

  it('says of each wait whether stopping in it loses nothing: always for a read and a change refused (429), never after a change that may have landed', async () => {
    const { client, waits } = harness([rateLimited('1'), json(503, { error: 'down', code: 'INTERNAL' }), rateLimited('1'), json(200, { id: 'key_1', revoked: true })]);
    await client.revokeKey('key_1');
    expect(waits.map((w) => [w.reason, 'stoppable' in w && w.stoppable])).toEqual([
      ['rate-limit', true],
      ['backoff', false],
      ['rate-limit', false],
    ]);
    const read = harness([json(503, { error: 'down', code: 'INTERNAL' }), json(200, { keys: [] })]);
    await read.client.probeKeyList();
    expect(read.waits.map((w) => 'stoppable' in w && w.stoppable)).toEqual([true]);
    // A revoke svc must see through (a key nobody has the secret of): none of its waits is cut short.
    const finished = harness([rateLimited('1'), json(200, { id: 'key_1', revoked: true })]);
    await finished.client.revokeKey('key_1', { finish: true });
    expect(finished.waits.map((w) => 'stoppable' in w && w.stoppable)).toEqual([false]);
  });

  it('recovers from a reset connection on a read', async () => {
    const { client, waits } = harness([new TransportError('reset', true), json(200, { keys: [] })]);
    await expect(client.probeKeyList()).resolves.toMatchObject({ status: 200 });
    expect(waits).toEqual([{ reason: 'backoff', ms: 500, cause: 'reset', stoppable: true }]);
  });

  it('does not retry a POST that may have reached the server', async () => {
    const { client, requests } = harness([new TransportError('no answer within 1234 ms', true)]);
    const error = await client.createKey({ name: 'x' }).catch((e) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ mayHaveReachedServer: true, method: 'POST' });
    expect(requests).toHaveLength(1);
  });

  it('does not retry a POST answered 500', async () => {
    const { client, requests } = harness([json(500, { error: 'boom', code: 'INTERNAL' })]);
    await expect(client.createKey({ name: 'x' })).rejects.toBeInstanceOf(ApiError);
    expect(requests).toHaveLength(1);
  });

  it('retries a POST whose connection was refused', async () => {
    const { client, requests } = harness([new TransportError('connection refused', false), json(201, { id: 'key_1' })]);
    expect((await client.createKey({ name: 'x' })).body).toMatchObject({ id: 'key_1' });
    expect(requests).toHaveLength(2);
  });

  it('reports 204 as unchanged with no body', async () => {
    const { client } = harness([{ status: 204, headers: {}, text: '' }]);
    await expect(client.setEnabled('key_1', true)).resolves.toEqual({ changed: false, document: null });
  });

  it('rejects a 200 that is not JSON', async () => {
    const { client } = harness([{ status: 200, headers: {}, text: '<html>' }]);
    await expect(client.probeKeyList()).rejects.toBeInstanceOf(UnexpectedResponseError);
  });

  it("tells JSON cut short on its way from an answer that never was JSON", async () => {
    const { client } = harness([
      { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, text: '{"keys":[{"id":"key_1"' },
      { status: 200, headers: { 'content-type': 'text/html' }, text: '<html>' },
    ]);
    await expect(client.probeKeyList()).rejects.toMatchObject({ garbled: true, message: 'GET /user/api-keys answered 200 with JSON that does not parse' });
    await expect(client.probeKeyList()).rejects.toMatchObject({ garbled: false, message: 'GET /user/api-keys answered 200 without a JSON body' });
  });

  it('logs requests for --verbose without the secret', async () => {
    const { client, log } = harness([json(200, { keys: [] })]);
    await client.probeKeyList();
    expect(log.join('\n')).not.toContain(KEY);
    expect(log[0]).toContain('Bearer sk_aaaa…WXYZ');
  });
});

describe('one deadline for the whole command', () => {
  const unavailable = () => json(503, { error: 'busy', code: 'UNAVAILABLE' });

  it('bounds every wait by --max-wait on the wall clock, jitter and the requests between them counted', async () => {
    // Each request takes 3 s; each 429 asks 2 s, plus 500 ms of jitter. After 3 + 2.5 + 3 s, another 2.5 s would end at 11 s.
    const { client, waits, requests } = harness([rateLimited('2'), rateLimited('2'), rateLimited('2'), rateLimited('2')], {}, 20_000, {
      waitUntilMs: 10_000,
      requestMs: 3_000,
    });
    const error = await client.probeKeyList().catch((e) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.reason).toBe('budget');
    expect(waits.map((w) => w.ms)).toEqual([2_500]);
    expect(requests).toHaveLength(2);
  });

  it('honours a 503\'s Retry-After within the budget, and gives up rather than retry sooner than asked', async () => {
    const soon = harness([json(503, { error: 'busy' }, { 'retry-after': '5' }), json(200, { keys: [] })], {}, 20_000, { waitUntilMs: 10_000 });
    expect((await soon.client.probeKeyList()).status).toBe(200);
    expect(soon.waits.map((w) => w.ms)).toEqual([5_000]);
    const late = harness([json(503, { error: 'busy' }, { 'retry-after': '30' })], {}, 20_000, { waitUntilMs: 10_000 });
    const error = await late.client.probeKeyList().catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(503);
    expect(late.waits).toEqual([]);
  });

  it('sends every POST with an Idempotency-Key, the same on each attempt', async () => {
    const { client, requests } = harness([new TransportError('connection refused', false), json(201, { id: 'key_1', secret: KEY })]);
    await client.createKey({ name: 'ci' });
    const keys = requests.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(keys[1]).toBe(keys[0]);
    const other = harness([json(201, { id: 'key_2', secret: KEY }), json(200, { keys: [] })]);
    await other.client.createKey({ name: 'ci' });
    await other.client.probeKeyList();
    expect(other.requests[0]!.headers['idempotency-key']).not.toBe(keys[0]);
    expect(other.requests[1]!.headers).not.toHaveProperty('idempotency-key');
  });

  it('takes no wait that would end past it, and fails with the last answer instead', async () => {
    // Backoffs of 500, 1000, 2000 ms fit in 4 s; the next, 4000 ms, would not.
    const { client, requests, waits } = harness([unavailable(), unavailable(), unavailable(), unavailable(), unavailable()], {}, 4_000);
    const error = await client.probeKeyList().catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(503);
    expect(waits.map((w) => w.ms)).toEqual([500, 1000, 2000]);
    expect(requests).toHaveLength(4);
  });

  it('gives each attempt at most the time left, however long --timeout is', async () => {
    const { client, requests } = harness([unavailable(), json(200, { keys: [] })], {}, 800);
    await client.probeKeyList();
    expect(requests.map((r) => r.timeoutMs)).toEqual([800, 300]);
  });

  it('ends a rate-limit wait that would pass it as --max-wait does (exit 5)', async () => {
    const { client, waits } = harness([rateLimited('30')], {}, 20_000);
    const error = await client.probeKeyList().catch((e) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.reason).toBe('budget');
    expect(waits).toEqual([]);
  });
});
