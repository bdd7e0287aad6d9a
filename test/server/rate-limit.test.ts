// tier: in-process
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

let t: TestServer;
beforeAll(async () => {
  // The server's clock is real time plus what /_local/clock added. With real time stood still, a
  // window ends where a test puts it, however long its requests take: on a loaded machine, 30
  // requests took half a second and a Retry-After of 40 came out 39.
  vi.useFakeTimers({ toFake: ['Date'] });
  t = await startTestServer({ plan: 'free' });
});
afterAll(async () => {
  await t.close();
  vi.useRealTimers();
});
beforeEach(() => t.startOfNextWindow());

async function spend(n: number, key?: string): Promise<void> {
  for (let i = 0; i < n; i++) expect((await t.api('GET', '/workspace', { key })).status).toBe(200);
}

describe('rate limit (§A3)', () => {
  it('admits 30 per window on free with RateLimit-* headers, then 429 with Retry-After', async () => {
    for (let i = 1; i <= 30; i++) {
      const res = await t.api('GET', '/workspace');
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('30');
      expect(res.headers['ratelimit-remaining']).toBe(String(30 - i));
      expect(res.headers['ratelimit-policy']).toBe('30;w=60');
      expect(res.headers['ratelimit-reset']).toBe('60');
    }
    await t.advance(20.5);
    const res = await t.api('GET', '/workspace');
    expect(res.status).toBe(429);
    expect(res.json).toEqual({ error: expect.stringMatching(/^Rate limit exceeded: /), code: 'RATE_LIMITED' });
    expect(res.headers['retry-after']).toBe('40');
    expect(res.headers['ratelimit-reset']).toBe('40');
    expect(res.headers['ratelimit-remaining']).toBe('0');
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('opens a new window at the epoch-aligned boundary, not 60 s after the first request', async () => {
    await t.advance(45);
    await spend(30);
    expect((await t.api('GET', '/workspace')).headers['retry-after']).toBe('15');
    await t.advance(15);
    const res = await t.api('GET', '/workspace');
    expect(res.status).toBe(200);
    expect(res.headers['ratelimit-remaining']).toBe('29');
  });

  it('counts every authenticated request, whatever its outcome; 401s count against nothing', async () => {
    await t.api('GET', '/no-such-path');
    await t.api('POST', '/user/api-keys', { body: { bad: 1 } });
    for (let i = 0; i < 10; i++) await t.api('GET', '/workspace', { key: null });
    const res = await t.api('GET', '/workspace');
    expect(res.headers['ratelimit-remaining']).toBe('27');
  });

  it('shares one counter between all keys of a workspace; another workspace has its own', async () => {
    const second = (await t.api('POST', '/user/api-keys', { body: { name: 'second' } })).json.secret;
    await spend(14);
    await spend(15, second);
    expect((await t.api('GET', '/workspace')).status).toBe(429);
    expect((await t.api('GET', '/workspace', { key: second })).status).toBe(429);
    const stranger = (await t.admin('POST', '/users', { plan: 'free' })).json.apiKey.secret;
    const res = await t.api('GET', '/workspace', { key: stranger });
    expect(res.status).toBe(200);
    expect(res.headers['ratelimit-remaining']).toBe('29');
  });

  it('admits exactly the limit when requests arrive all at once', async () => {
    const answers = await Promise.all(Array.from({ length: 60 }, () => t.api('GET', '/workspace')));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(30);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(30);
  });

  it('a raised plan admits more in the current window at once; a lowered one refuses until the window ends', async () => {
    const ws = t.server.ready.workspaceId;
    await spend(30);
    expect((await t.api('GET', '/workspace')).status).toBe(429);

    expect((await t.admin('PATCH', `/workspaces/${ws}`, { plan: 'starter' })).status).toBe(200);
    const raised = await t.api('GET', '/workspace');
    expect(raised.status).toBe(200);
    expect(raised.json).toMatchObject({ plan: 'starter', requestsPerMinute: 120 });
    expect(raised.headers['ratelimit-limit']).toBe('120');
    expect(raised.headers['ratelimit-remaining']).toBe('89');
    expect(raised.headers['ratelimit-policy']).toBe('120;w=60');

    await t.admin('PATCH', `/workspaces/${ws}`, { plan: 'free' });
    const lowered = await t.api('GET', '/workspace');
    expect(lowered.status).toBe(429);
    expect(lowered.headers['ratelimit-limit']).toBe('30');
    expect(lowered.headers['ratelimit-remaining']).toBe('0');

    await t.advance(60);
    expect((await t.api('GET', '/workspace')).status).toBe(200);
  });
  it('each 429 names its own workspace, plan, ceiling and wait: none repeats a refusal made for another', async () => {
    const ws = t.server.ready.workspaceId;
    const refusal = async (key?: string) => {
      const res = await t.api('GET', '/workspace', { key });
      expect(res.status).toBe(429);
      return { error: res.json.error, retryAfter: res.headers['retry-after'] };
    };
    await spend(30);
    const first = await refusal();
    expect(first).toEqual({ error: `Rate limit exceeded: 30 requests per minute for workspace ${ws} (plan free); retry in 60 s`, retryAfter: '60' });
    expect(await refusal()).toEqual(first);
    await t.advance(1);
    expect(await refusal()).toEqual({ error: first.error.replace('retry in 60 s', 'retry in 59 s'), retryAfter: '59' });

    const stranger = (await t.admin('POST', '/users', { plan: 'free' })).json;
    await spend(30, stranger.apiKey.secret);
    expect((await refusal(stranger.apiKey.secret)).error).toContain(`workspace ${stranger.workspace.id} (plan free)`);
    expect((await refusal()).error).toContain(`workspace ${ws} (plan free)`);

    expect((await t.admin('PATCH', `/workspaces/${ws}`, { plan: 'starter' })).status).toBe(200);
    await spend(90);
    expect((await refusal()).error).toBe(`Rate limit exceeded: 120 requests per minute for workspace ${ws} (plan starter); retry in 59 s`);
    await t.admin('PATCH', `/workspaces/${ws}`, { plan: 'free' });
  });
});
