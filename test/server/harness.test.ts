// tier: process
/**
 * The rest of the test harness of docs/contract.md §B: the request log
 * (`/_local/requests`), `/_local/reset` and `/_local/openapi.json`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../scripts/openapi-json.mjs';
import { RequestLog } from '../../src/server/request-log.js';
import { canMount, mountTmpfs } from '../helpers/tmpfs.js';
import { ADMIN_TOKEN, startTestServer, type TestServer } from './helpers.js';

describe('request log', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ plan: 'pro' });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.startOfNextWindow();
  });

  const newest = async (limit?: number) =>
    (await t.admin('GET', `/requests${limit === undefined ? '' : `?limit=${limit}`}`)).json.requests as Record<string, unknown>[];

  it('records each request newest first, with its key hint, workspace, time and fault, and never the admin area', async () => {
    const workspace = (await t.api('GET', '/workspace')).json;
    const [rule] = (await t.admin('POST', '/faults', { rules: [{ method: 'GET', path: '/user/api-keys', status: 503 }] })).json.rules;
    await t.api('GET', '/user/api-keys?limit=5');
    const [faulted, plain] = await newest(2);
    const hint = `${t.apiKey.slice(0, 7)}…${t.apiKey.slice(-4)}`;
    expect(faulted).toEqual({
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      method: 'GET',
      path: '/api/service/user/api-keys',
      status: 503,
      keyHint: hint,
      workspaceId: workspace.id,
      ms: expect.any(Number),
      fault: rule.id,
    });
    expect(plain).toMatchObject({ path: '/api/service/workspace', status: 200, keyHint: hint, fault: null });
    expect(Date.parse(faulted!.at as string)).toBeGreaterThanOrEqual(Date.parse(plain!.at as string));
  });

  it('records the server clock, a delay in ms, and null status for answers that never came', async () => {
    const now = Date.parse((await t.admin('GET', '/clock')).json.now);
    await t.admin('POST', '/faults', { rules: [{ delayMs: 150 }, { then: 'reset' }] });
    await t.api('GET', '/workspace');
    await t.api('GET', '/workspace').catch(() => {});
    const [reset, delayed] = await newest(2);
    expect(delayed).toMatchObject({ status: 200, fault: expect.stringMatching(/^flt_/) });
    expect(delayed!.ms).toBeGreaterThanOrEqual(145);
    expect(Date.parse(delayed!.at as string)).toBeGreaterThanOrEqual(now);
    expect(reset).toMatchObject({ status: null, fault: expect.stringMatching(/^flt_/) });
  });

  it('never holds a secret: not of a created key, nor of a bad bearer, nor from the query', async () => {
    const created = await t.api('POST', '/user/api-keys', { body: { name: 'secretive' } });
    expect(created.status).toBe(201);
    const bad = `sk_${'Q'.repeat(64)}`;
    expect((await t.api('GET', '/workspace', { key: bad })).status).toBe(401);
    await t.api('GET', `/workspace?token=${t.apiKey}`);
    const text = (await t.admin('GET', '/requests')).text;
    for (const secret of [created.json.secret, bad, t.apiKey]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(secret.slice(3, 20));
    }
    // A hint is sk_ + 4 symbols + … + 4: nothing longer after sk_ may appear.
    expect(text).not.toMatch(/sk_[A-Za-z0-9]{5,}/);
    const [withQuery, unauthorized] = await newest(2);
    expect(withQuery!.path).toBe('/api/service/workspace');
    expect(unauthorized).toMatchObject({ status: 401, keyHint: null, workspaceId: null, fault: null });
  });

  it('never holds a key that a script put in the path instead of an id, plain or percent-encoded', async () => {
    const created = await t.api('POST', '/user/api-keys', { body: { name: 'pasted' } });
    const secret = created.json.secret as string;
    const encoded = secret.replace('_', '%5F').replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    for (const path of [`/user/api-keys/${secret}`, `/user/api-keys/${encoded}`, `/${secret}/x`]) {
      await t.api('GET', path);
      await request(`${t.url}/elsewhere${path}`);
    }
    const text = (await t.admin('GET', '/requests')).text;
    expect(text).not.toContain(secret.slice(3, 20));
    expect(text).not.toContain(encoded.slice(3, 20));
    expect(text).not.toMatch(/sk(_|%5F)[A-Za-z0-9%]{5,}/i);
    const [, , , , , keysPath] = await newest(6);
    expect(keysPath).toMatchObject({ path: '/api/service/user/api-keys/sk_[redacted]', status: 404 });
  });

  it('records paths outside the API, unauthenticated', async () => {
    await request(`${t.url}/nowhere`);
    expect((await newest(1))[0]).toMatchObject({ path: '/nowhere', status: 404, keyHint: null });
  });

  it('keeps the newest 1,000', async () => {
    for (let i = 0; i < 1_005; i++) await request(`${t.url}/n/${i}`).then((res) => res.body.dump());
    const all = await newest();
    expect(all).toHaveLength(1_000);
    expect(all[0]!.path).toBe('/n/1004');
    expect(all[999]!.path).toBe('/n/5');
    expect(await newest(5000)).toHaveLength(1_000);
    expect((await newest(3)).map((r) => r.path)).toEqual(['/n/1004', '/n/1003', '/n/1002']);
  });

  it.each(['0', '-1', 'x', '1.5', ''])('refuses limit=%s with 400', async (limit) => {
    const res = await t.admin('GET', `/requests?limit=${limit}`);
    expect(res.status).toBe(400);
    expect(res.json.code).toBe('INVALID_REQUEST');
  });

  it('a ring smaller than its input keeps the newest, in order', () => {
    const log = new RequestLog(3);
    for (let i = 0; i < 7; i++) log.record({ at: i, method: 'GET', path: `/${i}`, status: 200, keyHint: null, workspaceId: null, ms: 0.4, fault: null });
    expect(log.newest(10).map((r) => r.path)).toEqual(['/6', '/5', '/4']);
    expect(log.newest(10)[0]!.ms).toBe(0);
    log.clear();
    expect(log.newest(10)).toEqual([]);
  });
});

describe('reset', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ plan: 'creator' });
  });
  afterAll(() => t.close());

  it('makes a fresh user, workspace and bootstrap key, answering the ready document; nothing of the old world is left', async () => {
    const oldKey = t.apiKey;
    const created = (await t.api('POST', '/user/api-keys', { body: { name: 'old' } })).json;
    const other = (await t.admin('POST', '/users', { name: 'Other' })).json;
    await t.admin('POST', '/faults', { rules: [{ status: 503, times: 0 }] });
    await t.advance(3600);
    const clockBefore = Date.parse((await t.admin('GET', '/clock')).json.now);

    const res = await t.admin('POST', '/reset');
    expect(res.status).toBe(200);
    const ready = res.json;
    expect(ready).toEqual({
      url: t.url,
      apiKey: expect.stringMatching(/^sk_[A-Za-z0-9]{64}$/),
      adminToken: ADMIN_TOKEN,
      userId: expect.stringMatching(/^usr_/),
      workspaceId: expect.stringMatching(/^ws_/),
      plan: 'creator',
    });
    expect(Object.keys(ready)).toEqual(Object.keys(t.server.ready));
    expect(ready.userId).not.toBe(t.server.ready.userId);
    expect((await t.admin('GET', '/requests')).json).toEqual({ requests: [] });
    expect((await t.admin('GET', '/faults')).json).toEqual({ rules: [] });

    for (const key of [oldKey, created.secret, other.apiKey.secret]) {
      expect((await t.api('GET', '/workspace', { key })).status).toBe(401);
    }
    const keys = (await t.api('GET', '/user/api-keys', { key: ready.apiKey })).json.keys;
    expect(keys.map((k: { name: string }) => k.name)).toEqual(['bootstrap']);
    expect((await t.api('GET', '/workspace', { key: ready.apiKey })).json).toMatchObject({ id: ready.workspaceId, plan: 'creator' });
    expect((await t.admin('PATCH', `/workspaces/${other.workspace.id}`, { plan: 'pro' })).status).toBe(404);
    // The clock keeps its offset: an hour ahead stays an hour ahead.
    expect(Date.parse((await t.admin('GET', '/clock')).json.now)).toBeGreaterThanOrEqual(clockBefore);
  });

  it('answers 401, not a 500, to a request of the old world still arriving or waiting out a delay', async () => {
    const errors: unknown[] = [];
    const own = await startTestServer({ logError: (error) => errors.push(error) });
    try {
      // Rules that change nothing but are used up on arrival, after authentication: once both are gone,
      // both requests are past it, one waiting for the rest of its body, one for its delay.
      await own.admin('POST', '/faults', { rules: [{ method: 'POST', then: 'answer' }, { path: '/workspace', delayMs: 1_000 }] });
      const body = '{"name":"late"}';
      const socket = connect(own.port, '127.0.0.1');
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
      const closed = new Promise((resolve) => socket.on('close', resolve));
      socket.write(
        `POST /api/service/user/api-keys HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${own.apiKey}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
      );
      const delayed = own.api('GET', '/workspace');
      await expect.poll(async () => (await own.admin('GET', '/faults')).json.rules).toEqual([]);
      const fresh = (await own.admin('POST', '/reset')).json;
      socket.end(body.slice(5));
      await closed;
      expect(answer).toMatch(/^HTTP\/1\.1 401 /);
      expect((await delayed).status).toBe(401);
      expect(errors).toEqual([]);
      const keys = (await own.api('GET', '/user/api-keys', { key: fresh.apiKey })).json.keys;
      expect(keys.map((k: { name: string }) => k.name)).toEqual(['bootstrap']);
    } finally {
      await own.close();
    }
  });

  it('refuses a body and a wrong admin token', async () => {
    expect((await t.admin('POST', '/reset', { plan: 'pro' })).status).toBe(400);
    const res = await request(`${t.url}/_local/reset`, { method: 'POST', headers: { authorization: 'Bearer nope' } });
    expect(res.statusCode).toBe(401);
  });
});

describe('reset with --data', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-reset-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is saved like any change: after a restart only the new world is there', async () => {
    const file = join(dir, 'state.json');
    const first = await startTestServer({ dataFile: file });
    const oldKey = first.apiKey;
    const ready = (await first.admin('POST', '/reset')).json;
    await first.close();

    const second = await startTestServer({ dataFile: file });
    try {
      expect(second.server.ready).toMatchObject({ apiKey: null, userId: ready.userId, workspaceId: ready.workspaceId });
      expect((await second.api('GET', '/workspace', { key: oldKey })).status).toBe(401);
      expect((await second.api('GET', '/workspace', { key: ready.apiKey })).status).toBe(200);
    } finally {
      await second.close();
    }
  });
});

describe.skipIf(!canMount)('reset whose save fails (needs root to mount a tmpfs; skipped when not root)', () => {
  it('answers 503 and leaves the old world as it was, rules and log included', async () => {
    const mount = mountTmpfs('256k');
    const t = await startTestServer({ dataFile: join(mount.dir, 'state.json'), logWarning: () => {} });
    try {
      const created = (await t.api('POST', '/user/api-keys', { body: { name: 'kept' } })).json;
      await t.admin('POST', '/faults', { rules: [{ path: '/nothing', status: 500 }] });
      mount.readOnly();
      const res = await t.admin('POST', '/reset');
      expect(res.status, res.text).toBe(503);
      expect(res.json.code).toBe('UNAVAILABLE');
      expect(res.text).not.toMatch(/sk_[A-Za-z0-9]{5,}/);
      expect((await t.api('GET', '/workspace')).status).toBe(200);
      expect((await t.api('GET', '/workspace', { key: created.secret })).status).toBe(200);
      expect((await t.admin('GET', '/faults')).json.rules).toHaveLength(1);
      expect((await t.admin('GET', '/requests')).json.requests.length).toBeGreaterThan(0);
    } finally {
      await t.close();
      mount.unmount();
    }
  });
});

describe('/_local/openapi.json', () => {
  it('answers docs/openapi.yaml as JSON', async () => {
    const t = await startTestServer();
    try {
      const res = await t.admin('GET', '/openapi.json');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.json).toEqual(await openApiDocument());
      expect(res.json.openapi).toMatch(/^3\.1\./);
    } finally {
      await t.close();
    }
  });
});
