// tier: in-process
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, UNAUTHORIZED_BODY, type Answer, type TestServer } from './helpers.js';

const KEY_RECORD_FIELDS = ['createdAt', 'enabled', 'expiresAt', 'hint', 'id', 'lastUsedAt', 'name', 'status', 'workspaceId'];
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let t: TestServer;
beforeAll(async () => {
  // Pro, so the many requests of this file never meet the limiter unless a test means to.
  t = await startTestServer({ plan: 'pro' });
});
afterAll(() => t.close());
// Each test starts in a fresh window with the whole budget.
beforeEach(() => t.startOfNextWindow());

async function createKey(body: unknown, key?: string): Promise<Answer> {
  const res = await t.api('POST', '/user/api-keys', { body, key });
  expect(res.status, res.text).toBe(201);
  return res;
}

function expectError(res: Answer, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(res.json).toEqual({ error: expect.any(String), code });
}

describe('GET /user/api-keys', () => {
  it('lists the caller\'s keys as KeyRecords, no secrets, no-store', async () => {
    const res = await t.api('GET', '/user/api-keys');
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const [bootstrap] = res.json.keys;
    expect(Object.keys(bootstrap).sort()).toEqual(KEY_RECORD_FIELDS);
    expect(bootstrap).toMatchObject({
      id: expect.stringMatching(/^[a-z0-9_]+$/),
      name: 'bootstrap',
      hint: `sk_${t.apiKey.slice(3, 7)}\u2026${t.apiKey.slice(-4)}`,
      enabled: true,
      status: 'enabled',
      workspaceId: t.server.ready.workspaceId,
      expiresAt: null,
    });
    expect(bootstrap.createdAt).toMatch(ISO_MS);
    // The request itself was a successful authentication.
    expect(bootstrap.lastUsedAt).toMatch(ISO_MS);
    expect(res.text).not.toContain(t.apiKey.slice(7, -4));
  });

  it('lists each key as it is now, after a disable, an expiry and a use: never a record from an earlier answer', async () => {
    const created = await createKey({ name: 'changing', expiresAt: new Date(Date.parse((await t.admin('GET', '/clock')).json.now) + 120_000).toISOString() });
    const listed = async () => {
      const res = await t.api('GET', '/user/api-keys');
      // ASCII, the hint's … escaped, so the length node was told is the byte count.
      expect(res.text).toMatch(/^[\x20-\x7e]*$/);
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
      return res.json.keys.find((k: { id: string }) => k.id === created.json.id);
    };
    expect(await listed()).toMatchObject({ enabled: true, status: 'enabled', lastUsedAt: null });
    expect((await t.api('PATCH', `/user/api-keys/${created.json.id}`, { body: { enabled: false } })).status).toBe(200);
    expect(await listed()).toMatchObject({ enabled: false, status: 'disabled' });
    expect((await t.api('PATCH', `/user/api-keys/${created.json.id}`, { body: { enabled: true } })).status).toBe(200);
    expect((await t.api('GET', '/workspace', { key: created.json.secret })).status).toBe(200);
    const used = await listed();
    expect(used).toMatchObject({ enabled: true, status: 'enabled', lastUsedAt: expect.stringMatching(ISO_MS) });
    expect(used).toEqual((await t.api('GET', `/user/api-keys/${created.json.id}`)).json);
    await t.advance(121);
    expect(await listed()).toMatchObject({ enabled: true, status: 'expired', lastUsedAt: used.lastUsedAt });
  });

  it('lists newest first', async () => {
    const a = await createKey({ name: 'older' });
    await t.advance(1);
    const b = await createKey({ name: 'newer' });
    const ids = (await t.api('GET', '/user/api-keys')).json.keys.map((k: { id: string }) => k.id);
    expect(ids.indexOf(b.json.id)).toBeLessThan(ids.indexOf(a.json.id));
    expect(ids.indexOf(a.json.id)).toBeLessThan(ids.length - 1);
  });
});

describe('POST /user/api-keys', () => {
  it('creates a key: 201, the record plus a working secret shown once', async () => {
    const res = await createKey({ name: '  deploy  ' });
    expect(Object.keys(res.json).sort()).toEqual([...KEY_RECORD_FIELDS, 'secret'].sort());
    expect(res.json).toMatchObject({ name: 'deploy', enabled: true, status: 'enabled', expiresAt: null, lastUsedAt: null });
    expect(res.json.secret).toMatch(/^sk_[A-Za-z0-9]{64}$/);
    expect(res.json.hint).toBe(`sk_${res.json.secret.slice(3, 7)}\u2026${res.json.secret.slice(-4)}`);
    expect(res.headers['cache-control']).toBe('no-store');

    const own = await t.api('GET', `/user/api-keys/${res.json.id}`, { key: res.json.secret });
    expect(own.status).toBe(200);
    expect(own.json.secret).toBeUndefined();
    expect(own.json.lastUsedAt).toMatch(ISO_MS);
  });

  it('makes two records with distinct ids for the same name', async () => {
    const a = await createKey({ name: 'twin' });
    const b = await createKey({ name: 'twin' });
    expect(a.json.id).not.toBe(b.json.id);
    expect(a.json.secret).not.toBe(b.json.secret);
  });

  it('stores an expiry given with an offset in UTC', async () => {
    const res = await createKey({ name: 'exp', expiresAt: '2999-01-01T02:00:00+02:00' });
    expect(res.json.expiresAt).toBe('2999-01-01T00:00:00.000Z');
  });

  it.each([
    [{}, 'missing name'],
    [{ name: '' }, 'empty name'],
    [{ name: '   ' }, 'blank name'],
    [{ name: 'x'.repeat(101) }, 'too long'],
    [{ name: 'a\u0007b' }, 'control character'],
    [{ name: 7 }, 'not a string'],
    [{ name: 'ok', expiresAt: '2001-01-01T00:00:00Z' }, 'past expiry'],
    [{ name: 'ok', expiresAt: '2999-01-01T00:00:00' }, 'expiry without offset'],
    [{ name: 'ok', expiresAt: 32503680000 }, 'expiry as a number'],
    [{ name: 'ok', enabled: false }, 'another field'],
  ] as [unknown, string][])('400 INVALID_REQUEST for %j (%s)', async (body) => {
    expectError(await t.api('POST', '/user/api-keys', { body }), 400, 'INVALID_REQUEST');
  });

  it('refuses an expiry equal to the server\'s now (it must be in the future)', async () => {
    const now = (await t.admin('GET', '/clock')).json.now;
    expectError(await t.api('POST', '/user/api-keys', { body: { name: 'x', expiresAt: now } }), 400, 'INVALID_REQUEST');
  });
});

describe('GET /user/api-keys/{id}', () => {
  it('404 NOT_FOUND for an unknown id, a malformed id and bad percent-encoding', async () => {
    for (const id of ['key_doesnotexist', 'KEY-UPPER', '%zz', '%E0%A4%A', 'a%00b']) {
      expectError(await t.api('GET', `/user/api-keys/${id}`), 404, 'NOT_FOUND');
    }
  });

  it('accepts a percent-encoded id', async () => {
    const { json } = await createKey({ name: 'enc' });
    const res = await t.api('GET', `/user/api-keys/${json.id.replace('_', '%5F')}`);
    expect(res.status).toBe(200);
    expect(res.json.id).toBe(json.id);
  });
});

describe('PATCH /user/api-keys/{id}', () => {
  it('200 with the record when the value changes, 204 without body when it does not', async () => {
    const { json } = await createKey({ name: 'toggle' });
    const off = await t.api('PATCH', `/user/api-keys/${json.id}`, { body: { enabled: false } });
    expect(off.status).toBe(200);
    expect(off.json).toMatchObject({ id: json.id, enabled: false, status: 'disabled' });

    const again = await t.api('PATCH', `/user/api-keys/${json.id}`, { body: { enabled: false } });
    expect(again.status).toBe(204);
    expect(again.text).toBe('');
    expect(again.headers['cache-control']).toBe('no-store');
    expect(again.headers['ratelimit-limit']).toBe('1000');

    const on = await t.api('PATCH', `/user/api-keys/${json.id}`, { body: { enabled: true } });
    expect(on.json).toMatchObject({ enabled: true, status: 'enabled' });
    expect((await t.api('PATCH', `/user/api-keys/${json.id}`, { body: { enabled: true } })).status).toBe(204);
  });

  it('disabling takes effect on the very next request, enabling too', async () => {
    const { json } = await createKey({ name: 'switch' });
    expect((await t.api('GET', '/workspace', { key: json.secret })).status).toBe(200);
    await t.api('PATCH', `/user/api-keys/${json.id}`, { body: { enabled: false } });
    const refused = await t.api('GET', '/workspace', { key: json.secret });
    expect(refused.status).toBe(401);
    expect(refused.json).toEqual(UNAUTHORIZED_BODY);
    await t.api('PATCH', `/user/api-keys/${json.id}`, { body: { enabled: true } });
    expect((await t.api('GET', '/workspace', { key: json.secret })).status).toBe(200);
  });

  it.each([[{}], [{ enabled: 'false' }], [{ enabled: null }], [{ enabled: false, name: 'x' }]])(
    '400 INVALID_REQUEST for %j',
    async (body) => {
      const { json } = await createKey({ name: 'bad-patch' });
      expectError(await t.api('PATCH', `/user/api-keys/${json.id}`, { body }), 400, 'INVALID_REQUEST');
    },
  );

  it('judges the body before the id: bad body to an unknown id is 400, good body is 404', async () => {
    expectError(await t.api('PATCH', '/user/api-keys/key_unknown', { body: { enabled: 'no' } }), 400, 'INVALID_REQUEST');
    expectError(await t.api('PATCH', '/user/api-keys/key_unknown', { body: { enabled: false } }), 404, 'NOT_FOUND');
  });
});

describe('DELETE /user/api-keys/{id}', () => {
  it('200 {id, revoked: true}, then 404 when already gone; the key stops working at once', async () => {
    const { json } = await createKey({ name: 'doomed' });
    const res = await t.api('DELETE', `/user/api-keys/${json.id}`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ id: json.id, revoked: true });
    expectError(await t.api('DELETE', `/user/api-keys/${json.id}`), 404, 'NOT_FOUND');
    expectError(await t.api('GET', `/user/api-keys/${json.id}`), 404, 'NOT_FOUND');
    const refused = await t.api('GET', '/user/api-keys', { key: json.secret });
    expect(refused.status).toBe(401);
    const ids = (await t.api('GET', '/user/api-keys')).json.keys.map((k: { id: string }) => k.id);
    expect(ids).not.toContain(json.id);
  });

  it('a key may revoke itself; its next request is 401', async () => {
    const { json } = await createKey({ name: 'self' });
    expect((await t.api('DELETE', `/user/api-keys/${json.id}`, { key: json.secret })).status).toBe(200);
    expect((await t.api('GET', '/user/api-keys', { key: json.secret })).status).toBe(401);
  });
});

describe('expiry', () => {
  it('takes effect on the next request once the clock passes expiresAt; status is expired even while enabled', async () => {
    const now = Date.parse((await t.admin('GET', '/clock')).json.now);
    const expiresAt = new Date(now + 30_000).toISOString();
    const { json } = await createKey({ name: 'short', expiresAt });
    expect((await t.api('GET', '/workspace', { key: json.secret })).status).toBe(200);
    await t.advance(30);
    const refused = await t.api('GET', '/workspace', { key: json.secret });
    expect(refused.status).toBe(401);
    expect(refused.json).toEqual(UNAUTHORIZED_BODY);
    const record = (await t.api('GET', `/user/api-keys/${json.id}`)).json;
    expect(record).toMatchObject({ enabled: true, status: 'expired', expiresAt });
    // Disabling an expired key still works and still reads as expired.
    const patched = await t.api('PATCH', `/user/api-keys/${json.id}`, { body: { enabled: false } });
    expect(patched.json).toMatchObject({ enabled: false, status: 'expired' });
  });
});

describe('GET /workspace', () => {
  it('is the calling key\'s anchored workspace', async () => {
    const res = await t.api('GET', '/workspace');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ id: t.server.ready.workspaceId, name: expect.any(String), plan: 'pro', requestsPerMinute: 1000 });
  });
});

describe('authentication (§A2)', () => {
  const wellFormedUnknown = `sk_${'Z'.repeat(64)}`;

  it.each<[string, Record<string, string>]>([
    ['no Authorization header', {}],
    ['an empty header', { authorization: '' }],
    ['another scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['the scheme alone', { authorization: 'Bearer' }],
    ['a malformed key', { authorization: 'Bearer sk_short' }],
    ['a key with a bad character', { authorization: `Bearer sk_${'-'.repeat(64)}` }],
    ['an unknown well-formed key', { authorization: `Bearer ${wellFormedUnknown}` }],
    ['the admin token', { authorization: 'Bearer test-admin-token' }],
  ])('401 with WWW-Authenticate and the uniform body for %s', async (_, headers) => {
    const res = await t.api('GET', '/user/api-keys', { key: null, headers });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json).toEqual(UNAUTHORIZED_BODY);
    expect(res.headers['ratelimit-limit']).toBeUndefined();
  });

  it('matches the scheme case-insensitively and allows several spaces', async () => {
    for (const authorization of [`bearer ${t.apiKey}`, `BEARER ${t.apiKey}`, `Bearer     ${t.apiKey}`]) {
      expect((await t.api('GET', '/workspace', { key: null, headers: { authorization } })).status).toBe(200);
    }
  });

  it('answers 401 before anything else: unknown paths, wrong methods and big bodies alike', async () => {
    expect((await t.api('GET', '/no/such/path', { key: null })).status).toBe(401);
    expect((await t.api('GET', '', { key: null })).status).toBe(401);
    expect((await t.api('PUT', '/workspace', { key: null })).status).toBe(401);
    const big = await t.api('POST', '/user/api-keys', { key: null, raw: 'x'.repeat(100_000), headers: { 'content-type': 'application/json' } });
    expect(big.status).toBe(401);
  });
});

describe('routing (§A5)', () => {
  it('404 NOT_FOUND for unknown paths under /api/service, and outside it', async () => {
    expectError(await t.api('GET', '/user/api-keys/key_x/extra'), 404, 'NOT_FOUND');
    expectError(await t.api('GET', '/user/api-keys/'), 404, 'NOT_FOUND');
    expectError(await t.api('GET', '/User/Api-Keys'), 404, 'NOT_FOUND');
    expectError(await t.api('GET', ''), 404, 'NOT_FOUND');
    const outside = await t.api('GET', '/../../favicon.ico');
    expectError(outside, 404, 'NOT_FOUND');
  });

  it.each<[string, string, string]>([
    ['HEAD', '/user/api-keys', 'GET, POST'],
    ['OPTIONS', '/user/api-keys', 'GET, POST'],
    ['PUT', '/user/api-keys', 'GET, POST'],
    ['DELETE', '/user/api-keys', 'GET, POST'],
    ['POST', '/user/api-keys/key_x', 'GET, PATCH, DELETE'],
    ['PUT', '/user/api-keys/key_x', 'GET, PATCH, DELETE'],
    ['POST', '/workspace', 'GET'],
    ['PATCH', '/workspace', 'GET'],
    ['PROPFIND', '/workspace', 'GET'],
  ])('405 METHOD_NOT_ALLOWED for %s %s, with Allow: %s', async (method, path, allow) => {
    const res = await t.api(method, path);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe(allow);
    expect(res.headers['ratelimit-limit']).toBe('1000');
    if (method !== 'HEAD') expect(res.json).toEqual({ error: expect.any(String), code: 'METHOD_NOT_ALLOWED' });
  });

  it('ignores the query string', async () => {
    expect((await t.api('GET', '/workspace?x=1&y')).status).toBe(200);
  });
});

describe('request bodies (§A1)', () => {
  it('treats a POST or PATCH without the JSON content type as {}, whatever it carried', async () => {
    const post = await t.api('POST', '/user/api-keys', { raw: '{"name":"x"}', headers: { 'content-type': 'text/plain' } });
    expectError(post, 400, 'INVALID_REQUEST');
    expect(post.json.error).toContain('"name" is required');
    const none = await t.api('POST', '/user/api-keys', { raw: '{"name":"x"}' });
    expect(none.json.error).toContain('"name" is required');
    const patch = await t.api('PATCH', '/user/api-keys/key_x', { raw: 'not json at all', headers: { 'content-type': 'application/jsonx' } });
    expect(patch.json.error).toContain('"enabled"');
  });

  it('accepts the JSON media type with parameters and in any case', async () => {
    for (const type of ['application/json; charset=utf-8', 'Application/JSON', 'application/json ; charset="UTF-8"']) {
      const res = await t.api('POST', '/user/api-keys', { raw: '{"name":"typed"}', headers: { 'content-type': type } });
      expect(res.status, type).toBe(201);
    }
  });

  it('an empty body with the JSON content type is {}', async () => {
    const res = await t.api('POST', '/user/api-keys', { raw: '', headers: { 'content-type': 'application/json' } });
    expect(res.json.error).toContain('"name" is required');
  });

  it.each([
    ['{"name":', 'truncated'],
    ['{name: "x"}', 'unquoted key'],
    ["{'name': 'x'}", 'single quotes'],
    ['   ', 'whitespace only'],
  ])('400 INVALID_JSON for %j (%s)', async (raw) => {
    expectError(await t.api('POST', '/user/api-keys', { raw, headers: { 'content-type': 'application/json' } }), 400, 'INVALID_JSON');
  });

  it('400 INVALID_JSON for bytes that are not UTF-8', async () => {
    const raw = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    expectError(await t.api('POST', '/user/api-keys', { raw, headers: { 'content-type': 'application/json' } }), 400, 'INVALID_JSON');
  });

  it.each(['[]', '"name"', '42', 'null', 'true'])('400 INVALID_REQUEST for the non-object %j', async (raw) => {
    expectError(await t.api('POST', '/user/api-keys', { raw, headers: { 'content-type': 'application/json' } }), 400, 'INVALID_REQUEST');
  });

  it('a body of exactly 64 KiB is read; one byte more is 413, whatever the content type', async () => {
    const exact = `{"name":"${'x'.repeat(65_536 - 11)}"}`;
    expect(Buffer.byteLength(exact)).toBe(65_536);
    const json = { 'content-type': 'application/json' };
    expectError(await t.api('POST', '/user/api-keys', { raw: exact, headers: json }), 400, 'INVALID_REQUEST');
    const over = `${exact} `;
    expectError(await t.api('POST', '/user/api-keys', { raw: over, headers: json }), 413, 'PAYLOAD_TOO_LARGE');
    expectError(await t.api('POST', '/user/api-keys', { raw: over, headers: { 'content-type': 'text/plain' } }), 413, 'PAYLOAD_TOO_LARGE');
    expectError(await t.api('PATCH', '/user/api-keys/key_x', { raw: over }), 413, 'PAYLOAD_TOO_LARGE');
  });

  it('checks routing before the body: 404 and 405 win over 413', async () => {
    const raw = 'x'.repeat(70_000);
    expect((await t.api('POST', '/nope', { raw })).status).toBe(404);
    expect((await t.api('POST', '/workspace', { raw })).status).toBe(405);
  });

  it('ignores a body on GET and DELETE, but still holds it to the size limit', async () => {
    expect((await t.api('GET', '/workspace', { raw: '{"junk":true}', headers: { 'content-type': 'application/json' } })).status).toBe(200);
    expectError(await t.api('GET', '/workspace', { raw: 'x'.repeat(70_000) }), 413, 'PAYLOAD_TOO_LARGE');
  });
});

describe('users see only their own keys', () => {
  it('another user\'s key id is 404 for GET, PATCH and DELETE, and absent from the list', async () => {
    const other = (await t.admin('POST', '/users', { name: 'Mallory' })).json;
    const { json: mine } = await createKey({ name: 'mine' });
    const theirs = other.apiKey.secret;
    expectError(await t.api('GET', `/user/api-keys/${mine.id}`, { key: theirs }), 404, 'NOT_FOUND');
    expectError(await t.api('PATCH', `/user/api-keys/${mine.id}`, { key: theirs, body: { enabled: false } }), 404, 'NOT_FOUND');
    expectError(await t.api('DELETE', `/user/api-keys/${mine.id}`, { key: theirs }), 404, 'NOT_FOUND');
    const list = (await t.api('GET', '/user/api-keys', { key: theirs })).json.keys;
    expect(list.map((k: { id: string }) => k.id)).toEqual([other.apiKey.id]);
    expect((await t.api('GET', `/user/api-keys/${mine.id}`)).json.enabled).toBe(true);
  });
});
