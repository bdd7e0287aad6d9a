// tier: in-process
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, UNAUTHORIZED_BODY, type Answer, type TestServer } from './helpers.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ plan: 'pro' });
});
afterAll(() => t.close());
beforeEach(() => t.startOfNextWindow());

function expectError(res: Answer, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.json).toEqual({ error: expect.any(String), code });
}

async function adminWith(authorization: string | undefined, path = '/clock'): Promise<Answer> {
  const res = await request(`${t.url}/_local${path}`, { headers: authorization === undefined ? {} : { authorization } });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: JSON.parse(text) };
}

describe('admin authentication', () => {
  it.each([
    ['no header', undefined],
    ['a wrong token', 'Bearer not-the-token'],
    ['a prefix of the token', 'Bearer test-admin'],
    ['the token plus more', 'Bearer test-admin-tokenX'],
    ['another scheme', 'Basic test-admin-token'],
  ])('401 like §A2 for %s', async (_, authorization) => {
    const res = await adminWith(authorization);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.json).toEqual(UNAUTHORIZED_BODY);
  });

  it('refuses an API key as admin token, even on unknown paths', async () => {
    expect((await adminWith(`Bearer ${t.apiKey}`)).status).toBe(401);
    expect((await adminWith(undefined, '/nothing-here')).status).toBe(401);
  });

  it('accepts the token with any scheme case', async () => {
    expect((await adminWith('bearer   test-admin-token')).status).toBe(200);
  });

  it('is generated at random when not given', async () => {
    const other = await startTestServer({ adminToken: undefined });
    try {
      expect(other.server.ready.adminToken).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(other.server.ready.adminToken).not.toBe(t.server.ready.adminToken);
    } finally {
      await other.close();
    }
  });
});

describe('POST /_local/users', () => {
  it('201: a new user with its own active workspace and a first working key', async () => {
    const res = await t.admin('POST', '/users', { name: 'Ada', plan: 'creator' });
    expect(res.status).toBe(201);
    const { user, workspace, apiKey } = res.json;
    expect(user).toEqual({ id: expect.stringMatching(/^usr_/), name: 'Ada', activeWorkspaceId: workspace.id });
    expect(workspace).toEqual({ id: expect.stringMatching(/^ws_/), name: expect.any(String), plan: 'creator', requestsPerMinute: 300 });
    expect(apiKey).toMatchObject({ workspaceId: workspace.id, enabled: true, status: 'enabled' });
    const ws = await t.api('GET', '/workspace', { key: apiKey.secret });
    expect(ws.json).toEqual(workspace);
  });

  it('defaults name and plan', async () => {
    const res = await t.admin('POST', '/users', {});
    expect(res.status).toBe(201);
    expect(res.json.workspace.plan).toBe('free');
  });

  it.each([[{ plan: 'gold' }], [{ name: '' }], [{ name: 5 }], [{ email: 'x@y' }]])('400 for %j', async (body) => {
    expectError(await t.admin('POST', '/users', body), 400, 'INVALID_REQUEST');
  });
});

describe('workspaces and anchoring', () => {
  it('a key anchors to the active workspace at creation; switching never moves it', async () => {
    const userId = t.server.ready.userId;
    const home = t.server.ready.workspaceId;
    const created = await t.admin('POST', '/workspaces', { userId, name: 'Side project', plan: 'starter' });
    expect(created.status).toBe(201);
    const side = created.json;
    expect(side).toEqual({ id: expect.stringMatching(/^ws_/), name: 'Side project', plan: 'starter', requestsPerMinute: 120 });

    // Creating a workspace does not make it active.
    const stillHome = await t.api('POST', '/user/api-keys', { body: { name: 'home-key' } });
    expect(stillHome.json.workspaceId).toBe(home);

    const switched = await t.admin('PUT', `/users/${userId}/active-workspace`, { workspaceId: side.id });
    expect(switched.status).toBe(200);
    expect(switched.json).toMatchObject({ id: userId, activeWorkspaceId: side.id });

    // Created with a key of the home workspace, anchored to the active one.
    const sideKey = (await t.api('POST', '/user/api-keys', { body: { name: 'side-key' } })).json;
    expect(sideKey.workspaceId).toBe(side.id);
    const seen = await t.api('GET', '/workspace', { key: sideKey.secret });
    expect(seen.json.id).toBe(side.id);
    expect(seen.headers['ratelimit-limit']).toBe('120');
    expect((await t.api('GET', '/workspace')).json.id).toBe(home);

    await t.admin('PUT', `/users/${userId}/active-workspace`, { workspaceId: home });
    const after = await t.api('GET', `/user/api-keys/${sideKey.id}`);
    expect(after.json.workspaceId).toBe(side.id);
    expect((await t.api('GET', '/workspace', { key: sideKey.secret })).json.id).toBe(side.id);
  });

  it('POST /_local/workspaces: 400 without plan or with an unknown user', async () => {
    const userId = t.server.ready.userId;
    expectError(await t.admin('POST', '/workspaces', { userId }), 400, 'INVALID_REQUEST');
    expectError(await t.admin('POST', '/workspaces', { plan: 'pro' }), 400, 'INVALID_REQUEST');
    expectError(await t.admin('POST', '/workspaces', { userId: 'usr_nobody', plan: 'pro' }), 400, 'INVALID_REQUEST');
    expectError(await t.admin('POST', '/workspaces', { userId, plan: 'pro', colour: 'red' }), 400, 'INVALID_REQUEST');
  });

  it('PATCH /_local/workspaces/{id}: 200, 404 for an unknown id, 400 for a bad plan', async () => {
    const ws = t.server.ready.workspaceId;
    const res = await t.admin('PATCH', `/workspaces/${ws}`, { plan: 'creator' });
    expect(res.json).toMatchObject({ id: ws, plan: 'creator', requestsPerMinute: 300 });
    await t.admin('PATCH', `/workspaces/${ws}`, { plan: 'pro' });
    expectError(await t.admin('PATCH', '/workspaces/ws_nope', { plan: 'pro' }), 404, 'NOT_FOUND');
    expectError(await t.admin('PATCH', '/workspaces/%zz', { plan: 'pro' }), 404, 'NOT_FOUND');
    expectError(await t.admin('PATCH', `/workspaces/${ws}`, { plan: 'Pro' }), 400, 'INVALID_REQUEST');
    expectError(await t.admin('PATCH', `/workspaces/${ws}`, {}), 400, 'INVALID_REQUEST');
  });

  it('PUT active-workspace: 404 for an unknown user, 400 for a workspace the user is not in', async () => {
    const stranger = (await t.admin('POST', '/users', {})).json;
    const userId = t.server.ready.userId;
    expectError(await t.admin('PUT', '/users/usr_nobody/active-workspace', { workspaceId: stranger.workspace.id }), 404, 'NOT_FOUND');
    expectError(await t.admin('PUT', `/users/${userId}/active-workspace`, { workspaceId: stranger.workspace.id }), 400, 'INVALID_REQUEST');
    expectError(await t.admin('PUT', `/users/${userId}/active-workspace`, { workspaceId: 'ws_nope' }), 400, 'INVALID_REQUEST');
    expectError(await t.admin('PUT', `/users/${userId}/active-workspace`, {}), 400, 'INVALID_REQUEST');
  });
});

describe('clock', () => {
  it('GET reads it; POST moves it forward, fractions included', async () => {
    const before = Date.parse((await t.admin('GET', '/clock')).json.now);
    const res = await t.admin('POST', '/clock', { advanceSeconds: 3600.5 });
    expect(res.status).toBe(200);
    const after = Date.parse(res.json.now);
    expect(after - before).toBeGreaterThanOrEqual(3_600_500);
    expect(after - before).toBeLessThan(3_600_500 + 5_000);
    expect(res.json.now).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('moves createdAt and lastUsedAt with it', async () => {
    await t.advance(86_400 * 365);
    const now = Date.parse((await t.admin('GET', '/clock')).json.now);
    const created = (await t.api('POST', '/user/api-keys', { body: { name: 'future' } })).json;
    expect(Math.abs(Date.parse(created.createdAt) - now)).toBeLessThan(5_000);
  });

  // 2.5e11 s is some 7,900 years: past the limit, though well within Date's range.
  it.each([
    [{ advanceSeconds: -1 }],
    [{ advanceSeconds: '10' }],
    [{ advanceSeconds: null }],
    [{}],
    [{ advanceSeconds: 1e308 }],
    [{ advanceSeconds: 2.5e11 }],
    [{ advanceSeconds: 1, x: 1 }],
  ])(
    '400 for %j',
    async (body) => {
      expectError(await t.admin('POST', '/clock', body), 400, 'INVALID_REQUEST');
    },
  );

  it('accepts 0', async () => {
    expect((await t.admin('POST', '/clock', { advanceSeconds: 0 })).status).toBe(200);
  });

  it('goes up to 9000-01-01T00:00:00.000Z and no further (400 naming it); up there keys are made, logged, saved and loaded again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-clock-limit-'));
    const dataFile = join(dir, 'state.json');
    const late = await startTestServer({ dataFile });
    try {
      const limit = Date.parse('9000-01-01T00:00:00.000Z');
      const toLimit = (limit - Date.parse((await late.admin('GET', '/clock')).json.now)) / 1000;
      // The server's clock only moves on between the two requests: one second past the limit read before is past it still.
      const past = await late.admin('POST', '/clock', { advanceSeconds: toLimit + 1 });
      expectError(past, 400, 'INVALID_REQUEST');
      expect(past.json.error).toContain('past 9000-01-01T00:00:00.000Z');
      await late.advance(toLimit - 3600);
      expectError(await late.admin('POST', '/clock', { advanceSeconds: 7200 }), 400, 'INVALID_REQUEST');

      const created = await late.api('POST', '/user/api-keys', { body: { name: 'late' } });
      expect(created.status, created.text).toBe(201);
      expect(created.json.createdAt).toMatch(/^8999-12-31T2/);
      expect((await late.api('GET', '/workspace', { key: created.json.secret })).status).toBe(200);
      const log = await late.admin('GET', '/requests');
      expect(log.status).toBe(200);
      expect(log.json.requests[0].at).toMatch(/^8999-12-31T2/);
      await late.close();

      const again = await startTestServer({ dataFile });
      expect((await again.api('GET', '/workspace', { key: created.json.secret })).status).toBe(200);
      await again.close();
    } finally {
      await late.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('admin routing', () => {
  it('404 for unknown paths and 405 with Allow for other methods', async () => {
    expectError(await t.admin('GET', '/nothing'), 404, 'NOT_FOUND');
    const res = await t.admin('DELETE', '/clock');
    expectError(res, 405, 'METHOD_NOT_ALLOWED');
    expect(res.headers.allow).toBe('GET, POST');
    expect((await t.admin('GET', '/users')).headers.allow).toBe('POST');
  });
});
