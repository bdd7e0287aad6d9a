// tier: in-process
/**
 * Fault rules of docs/contract.md §B (`/_local/faults`): every kind, against
 * the real server, as an HTTP client sees it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, UNAUTHORIZED_BODY, type TestServer } from './helpers.js';
import { savedState } from '../helpers/saved-state.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ plan: 'pro' });
});
afterAll(() => t.close());
beforeEach(() => t.startOfNextWindow());
afterEach(async () => {
  expect((await t.admin('DELETE', '/faults')).status).toBe(204);
});

async function addFaults(...rules: unknown[]): Promise<{ id: string }[]> {
  const res = await t.admin('POST', '/faults', { rules });
  expect(res.status, res.text).toBe(201);
  return res.json.rules;
}

/** The error a request ends in, when it gets no answer at all. */
async function failure(path: string, options: { method?: string; headersTimeout?: number } = {}): Promise<Error & { code?: string }> {
  try {
    const res = await request(`${t.url}/api/service${path}`, {
      method: (options.method ?? 'GET') as 'GET',
      headers: { authorization: `Bearer ${t.apiKey}` },
      headersTimeout: options.headersTimeout,
    });
    throw new Error(`answered ${res.statusCode}: ${await res.body.text()}`);
  } catch (error) {
    return error as Error & { code?: string };
  }
}

/** A request under /api/service whose answer need not be JSON. */
async function rawApi(method: string, path: string, body?: unknown): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const res = await request(`${t.url}/api/service${path}`, {
    method: method as 'GET',
    headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

async function keyNames(): Promise<string[]> {
  return (await t.api('GET', '/user/api-keys')).json.keys.map((k: { name: string }) => k.name);
}

describe('managing rules', () => {
  it('answers 201 with each rule, its id and every default filled in; GET lists them, DELETE removes them all', async () => {
    const res = await t.admin('POST', '/faults', { rules: [{ status: 503 }, { method: 'post', path: '/api/service/user/api-keys', then: 'hang', times: 0 }] });
    expect(res.status).toBe(201);
    const [first, second] = res.json.rules;
    expect(first).toEqual({
      id: expect.stringMatching(/^flt_[0-9a-f]{16}$/),
      method: null,
      path: null,
      times: 1,
      remaining: 1,
      delayMs: 0,
      then: 'status',
      after: false,
      landsAfterMs: null,
      status: 503,
      body: 'json',
      code: 'UNAVAILABLE',
      retryAfter: null,
    });
    // The method is case-insensitive and a full path (as the request log shows it) is taken as relative to /api/service.
    expect(second).toMatchObject({ method: 'POST', path: '/user/api-keys', then: 'hang', times: 0, remaining: null });
    expect((await t.admin('GET', '/faults')).json).toEqual({ rules: [first, second] });
    expect((await t.admin('DELETE', '/faults')).status).toBe(204);
    expect((await t.admin('GET', '/faults')).json).toEqual({ rules: [] });
  });

  it.each([
    ['no rules', {}],
    ['an empty list', { rules: [] }],
    ['a rule that is not an object', { rules: ['503'] }],
    ['an unknown field', { rules: [{ status: 503, satus: 1 }] }],
    ['a status out of range', { rules: [{ status: 302 }] }],
    ['a status that is a string', { rules: [{ status: '503' }] }],
    ['then: status without a status', { rules: [{ then: 'status' }] }],
    ['a status with another action', { rules: [{ then: 'reset', status: 502 }] }],
    ['an unknown action', { rules: [{ then: 'explode' }] }],
    ['an unknown body', { rules: [{ status: 502, body: 'xml' }] }],
    ['a code on an HTML body', { rules: [{ status: 502, body: 'html', code: 'X' }] }],
    ['negative times', { rules: [{ status: 502, times: -1 }] }],
    ['fractional delay', { rules: [{ delayMs: 1.5 }] }],
    ['a path without a slash', { rules: [{ path: 'user/api-keys', status: 500 }] }],
    ['a Retry-After that cannot be a header', { rules: [{ status: 429, retryAfter: 'a\r\nx-evil: 1' }] }],
    ['after that is not a boolean', { rules: [{ status: 502, after: 'yes' }] }],
    ['landsAfterMs with the real answer', { rules: [{ landsAfterMs: 1000 }] }],
    ['landsAfterMs with after', { rules: [{ status: 504, after: true, landsAfterMs: 1000 }] }],
    ['a fractional landsAfterMs', { rules: [{ status: 504, landsAfterMs: 0.5 }] }],
  ])('refuses %s with 400 and adds none of the rules', async (_, body) => {
    const res = await t.admin('POST', '/faults', body);
    expect(res.status, res.text).toBe(400);
    expect(res.json.code).toBe('INVALID_REQUEST');
    expect((await t.admin('GET', '/faults')).json).toEqual({ rules: [] });
  });

  it('needs the admin token like the rest of /_local', async () => {
    for (const method of ['GET', 'POST', 'DELETE']) {
      const res = await request(`${t.url}/_local/faults`, { method: method as 'GET', headers: { authorization: `Bearer ${t.apiKey}` } });
      expect(res.statusCode).toBe(401);
      expect(await res.body.json()).toEqual(UNAUTHORIZED_BODY);
    }
  });
});

describe('status faults', () => {
  it('answers a JSON error with the default code, without rate-limit headers', async () => {
    await addFaults({ status: 503 });
    const res = await t.api('GET', '/user/api-keys');
    expect(res.status).toBe(503);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json).toEqual({ error: expect.stringContaining('Service Unavailable'), code: 'UNAVAILABLE' });
    expect(res.headers['ratelimit-limit']).toBeUndefined();
    expect(res.headers.date).toBeDefined();
    expect((await t.api('GET', '/user/api-keys')).status).toBe(200);
  });

  it('answers an HTML page, as a proxy in front of the service would', async () => {
    await addFaults({ status: 502, body: 'html' });
    const res = await rawApi('GET', '/workspace');
    expect(res.status).toBe(502);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('<h1>502 Bad Gateway</h1>');
  });

  it('answers an empty body with no Content-Type', async () => {
    await addFaults({ status: 500, body: 'empty' });
    const res = await t.api('GET', '/workspace');
    expect(res.status).toBe(500);
    expect(res.text).toBe('');
    expect(res.headers['content-length']).toBe('0');
    expect(res.headers['content-type']).toBeUndefined();
  });

  it.each([
    ['with its code and a number', { code: 'RATE_LIMITED', retryAfter: '7' }, { code: 'RATE_LIMITED' }, '7'],
    ['without a code', { code: null, retryAfter: '1' }, {}, '1'],
    ['with an HTTP-date', { retryAfter: 'Wed, 21 Oct 2015 07:28:00 GMT' }, { code: 'RATE_LIMITED' }, 'Wed, 21 Oct 2015 07:28:00 GMT'],
    ['with junk', { retryAfter: 'soon-ish' }, { code: 'RATE_LIMITED' }, 'soon-ish'],
    ['with no Retry-After at all', {}, { code: 'RATE_LIMITED' }, undefined],
    ['with a code of its own', { code: 'QUOTA_EXCEEDED', retryAfter: '3' }, { code: 'QUOTA_EXCEEDED' }, '3'],
  ])('answers a 429 %s, the header verbatim', async (_, rule, body, retryAfter) => {
    await addFaults({ status: 429, ...rule });
    const res = await t.api('GET', '/user/api-keys');
    expect(res.status).toBe(429);
    expect(res.json).toEqual({ error: expect.any(String), ...body });
    expect(res.headers['retry-after']).toBe(retryAfter);
  });

  it('applies a fixed number of times, then lets requests through', async () => {
    await addFaults({ status: 500, times: 2 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await t.api('GET', '/workspace')).status);
    expect(statuses).toEqual([500, 500, 200]);
    expect((await t.admin('GET', '/faults')).json).toEqual({ rules: [] });
  });

  it('with times 0, applies until removed, counting nothing down', async () => {
    await addFaults({ status: 503, times: 0 });
    for (let i = 0; i < 5; i++) expect((await t.api('GET', '/workspace')).status).toBe(503);
    expect((await t.admin('GET', '/faults')).json.rules[0]).toMatchObject({ times: 0, remaining: null });
    await t.admin('DELETE', '/faults');
    expect((await t.api('GET', '/workspace')).status).toBe(200);
  });

  it('matches the method and the exact path, or a prefix ending in *; the first matching rule wins', async () => {
    await addFaults(
      { method: 'DELETE', path: '/user/api-keys/*', status: 500, times: 0 },
      { method: 'GET', path: '/workspace', status: 502, times: 0 },
      { path: '/workspace', status: 504, times: 0 },
    );
    expect((await t.api('GET', '/user/api-keys')).status).toBe(200);
    expect((await t.api('GET', '/user/api-keys/key_nothing')).status).toBe(404);
    expect((await t.api('DELETE', '/user/api-keys/key_nothing')).status).toBe(500);
    expect((await t.api('GET', '/workspace')).status).toBe(502);
    expect((await t.api('POST', '/workspace')).status).toBe(504);
  });

  it('applies after authentication: a request with a bad key gets its 401 and leaves the rule unused', async () => {
    await addFaults({ status: 503 });
    expect((await t.api('GET', '/workspace', { key: `sk_${'x'.repeat(64)}` })).status).toBe(401);
    expect((await t.api('GET', '/workspace', { key: null })).status).toBe(401);
    expect((await t.admin('GET', '/faults')).json.rules).toHaveLength(1);
    expect((await t.api('GET', '/workspace')).status).toBe(503);
  });

  it('applies before the rate limiter counts', async () => {
    const before = Number((await t.api('GET', '/workspace')).headers['ratelimit-remaining']);
    expect(before).toBeGreaterThan(0);
    await addFaults({ status: 503, times: 3 });
    for (let i = 0; i < 3; i++) await t.api('GET', '/workspace');
    expect(Number((await t.api('GET', '/workspace')).headers['ratelimit-remaining'])).toBe(before - 1);
  });

  it('leaves the admin area and paths outside the API alone', async () => {
    await addFaults({ status: 503, times: 0 });
    expect((await t.admin('GET', '/clock')).status).toBe(200);
    expect((await request(`${t.url}/elsewhere`)).statusCode).toBe(404);
  });
});

describe('delay, hang and reset', () => {
  it('delays, then the real handler answers', async () => {
    await addFaults({ method: 'POST', delayMs: 300 });
    const started = performance.now();
    const res = await t.api('POST', '/user/api-keys', { body: { name: 'slow' } });
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(res.status).toBe(201);
    expect(res.json.name).toBe('slow');
  });

  it('delays before a status', async () => {
    await addFaults({ delayMs: 200, status: 502 });
    const started = performance.now();
    expect((await t.api('GET', '/workspace')).status).toBe(502);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('hangs: no answer ever comes, and the next request is served', async () => {
    await addFaults({ then: 'hang' });
    const error = await failure('/workspace', { headersTimeout: 300 });
    expect(error.code).toBe('UND_ERR_HEADERS_TIMEOUT');
    expect((await t.api('GET', '/workspace')).status).toBe(200);
  });

  it('resets the connection', async () => {
    await addFaults({ then: 'reset' });
    const error = await failure('/workspace');
    expect(error.code).toMatch(/^(ECONNRESET|UND_ERR_SOCKET)$/);
    expect((await t.api('GET', '/workspace')).status).toBe(200);
  });
});

describe('after: the request is handled, then its answer is lost', () => {
  it('replaces the answer to a create: the key exists all the same', async () => {
    await addFaults({ method: 'POST', path: '/user/api-keys', status: 502, body: 'html', after: true });
    const res = await rawApi('POST', '/user/api-keys', { name: 'made-anyway' });
    expect(res.status).toBe(502);
    expect(res.text).not.toContain('sk_');
    expect(await keyNames()).toContain('made-anyway');
  });

  it('resets the connection after a revoke was made', async () => {
    const created = await t.api('POST', '/user/api-keys', { body: { name: 'revoked-anyway' } });
    await addFaults({ method: 'DELETE', then: 'reset', after: true });
    const error = await failure(`/user/api-keys/${created.json.id}`, { method: 'DELETE' });
    expect(error.code).toMatch(/^(ECONNRESET|UND_ERR_SOCKET)$/);
    expect(await keyNames()).not.toContain('revoked-anyway');
  });

  it('leaves a disable made but unanswered when it hangs', async () => {
    const created = await t.api('POST', '/user/api-keys', { body: { name: 'disabled-anyway' } });
    await addFaults({ method: 'PATCH', then: 'hang', after: true });
    const error = await (async () => {
      try {
        await request(`${t.url}/api/service/user/api-keys/${created.json.id}`, {
          method: 'PATCH',
          headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ enabled: false }),
          headersTimeout: 300,
        });
      } catch (e) {
        return e as { code?: string };
      }
    })();
    expect(error?.code).toBe('UND_ERR_HEADERS_TIMEOUT');
    expect((await t.api('GET', `/user/api-keys/${created.json.id}`)).json.enabled).toBe(false);
  });

  it('with then "answer", only delays the real answer', async () => {
    await addFaults({ method: 'GET', path: '/workspace', delayMs: 100, after: true });
    const res = await t.api('GET', '/workspace');
    expect(res.status).toBe(200);
    expect(res.headers['ratelimit-limit']).toBeDefined();
  });
});

describe('landsAfterMs: the answer now, the change later, as behind a gateway whose upstream still works', () => {
  const advance = (seconds: number) => t.admin('POST', '/clock', { advanceSeconds: seconds });

  it('a 504 at once; the key appears once the clock passes the time, created then', async () => {
    await addFaults({ method: 'POST', path: '/user/api-keys', status: 504, body: 'html', landsAfterMs: 20_000 });
    const res = await rawApi('POST', '/user/api-keys', { name: 'landing-late' });
    expect(res.status).toBe(504);
    expect(await keyNames()).not.toContain('landing-late');
    await advance(19);
    expect(await keyNames()).not.toContain('landing-late');
    const moved = await advance(2);
    const landed = (await t.api('GET', '/user/api-keys')).json.keys.find((k: { name: string }) => k.name === 'landing-late');
    expect(landed).toBeDefined();
    expect(Date.parse(landed.createdAt)).toBeGreaterThan(Date.parse(moved.json.now) - 2_000);
    expect(landed.lastUsedAt).toBeNull();
  });

  it('a reset at once; the change lands on the real clock too', async () => {
    await addFaults({ method: 'POST', path: '/user/api-keys', then: 'reset', landsAfterMs: 50 });
    const error = await (async () => {
      try {
        await rawApi('POST', '/user/api-keys', { name: 'reset-then-landed' });
      } catch (e) {
        return e as { code?: string };
      }
    })();
    expect(error?.code).toMatch(/^(ECONNRESET|UND_ERR_SOCKET)$/);
    await expect.poll(keyNames).toContain('reset-then-landed');
  });

  it('a change held back past a reset of the world is dropped with it', async () => {
    const fresh = await startTestServer({ plan: 'pro' });
    try {
      await fresh.admin('POST', '/faults', { rules: [{ method: 'POST', status: 504, landsAfterMs: 5_000 }] });
      expect((await fresh.api('POST', '/user/api-keys', { body: { name: 'never-lands' } })).status).toBe(504);
      const reset = await fresh.admin('POST', '/reset');
      await fresh.advance(10);
      const listed = await fresh.api('GET', '/user/api-keys', { key: reset.json.apiKey });
      expect(listed.json.keys.map((k: { name: string }) => k.name)).toEqual(['bootstrap']);
    } finally {
      await fresh.close();
    }
  });
});

describe('after: with --data, the change is on disk before the answer is lost', () => {
  let dir: string;
  let s: TestServer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-faults-'));
    s = await startTestServer({ dataFile: join(dir, 'state.json') });
  });
  afterAll(async () => {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('saves the created key before the 503 replaces its answer', async () => {
    expect((await s.admin('POST', '/faults', { rules: [{ method: 'POST', status: 503, after: true }] })).status).toBe(201);
    const res = await s.api('POST', '/user/api-keys', { body: { name: 'durable-anyway' } });
    expect(res.status).toBe(503);
    const saved = await savedState(join(dir, 'state.json'));
    expect(saved.keys.map((k: { name: string }) => k.name)).toContain('durable-anyway');
  });
});

describe('a server with hung requests', () => {
  it('stops at once, cutting them, rather than waiting for them to finish', async () => {
    // A server that waited for them would wait out its grace period, longer than the test may take.
    const s = await startTestServer({ timeouts: { shutdownGraceMs: 600_000 } });
    await s.admin('POST', '/faults', { rules: [{ then: 'hang', times: 1 }] });
    const hung = request(`${s.url}/api/service/workspace`, { headers: { authorization: `Bearer ${s.apiKey}` } }).catch((e: Error) => e);
    // The rule is used up when the request reaches it: from then on, the request hangs.
    await expect.poll(async () => (await s.admin('GET', '/faults')).json.rules).toEqual([]);
    await s.close();
    expect(await hung).toBeInstanceOf(Error);
  });
});
