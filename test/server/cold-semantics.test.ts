// tier: in-process
/**
 * A store loaded with cold keys: cursors across a warm, and a served store's
 * changes to warmed and cold keys, and the list order of keys of one
 * millisecond warmed out of order, across a restart and a reset.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Clock } from '../../src/server/clock.js';
import { decodeSnapshot, encodeSnapshot } from '../../src/server/snapshot.js';
import { Store, type StoredKey } from '../../src/server/store.js';
import { startTestServer, type TestServer } from './helpers.js';

const T = Date.parse('2026-11-25T12:00:00.000Z');

function built(count: number) {
  let now = T;
  const clock = new Clock(() => now);
  const store = new Store(clock);
  const users = [store.createUser('a', 'pro').user, store.createUser('b', 'free').user];
  const made: { key: StoredKey; secret: string }[] = [];
  for (let i = 0; i < count; i++) {
    // Ties in pairs: two keys per millisecond.
    if (i % 2 === 0) now += 1;
    made.push(store.createKey(users[i % 2]!, `key ${i}`, i % 5 === 0 ? now + 86_400_000 : null));
    if (i % 3 === 0) store.recordUse(made[i]!.key);
    if (i % 4 === 0) store.setEnabled(made[i]!.key, false);
  }
  store.takeChanges();
  const bytes = encodeSnapshot({ ...store.snapshotParts(), seq: 0, extra: {} });
  return { bytes, clock, users, made, tick: (ms: number) => (now += ms) };
}

describe('cursors across a warm', () => {
  it('pages through a user whose keys warm between pages (one by hash in the middle), no key repeats or hides', () => {
    const { bytes, clock, users, made } = built(400);
    const store = Store.load(decodeSnapshot(bytes), clock);
    const user = store.user(users[0]!.id)!;
    const seen: string[] = [];
    let page = store.keyPage(user, 7, null);
    seen.push(...page.keys.map((k) => k.id));
    // New key in the same ms as the newest, warming others meanwhile.
    store.keyByHash(made[10]!.key.hash);
    store.keyByHash(made[11]!.key.hash);
    while (page.next) {
      page = store.keyPage(user, 7, page.next);
      seen.push(...page.keys.map((k) => k.id));
    }
    const expected = made.filter((_, i) => i % 2 === 0).map((m) => m.key.id).reverse();
    expect(seen).toEqual(expected);
  });
});

describe('served: reset and restart with cold keys', () => {
  const dirs: string[] = [];
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const serve = async (dataFile: string) => {
    const t = await startTestServer({ plan: 'pro', dataFile, logWarning: () => {} });
    servers.push(t);
    return t;
  };

  it('a key warmed by auth, then disabled, another revoked, a third left cold: right after a restart; a reset drops them all', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cold-sem-'));
    dirs.push(dir);
    const file = join(dir, 'state.svc');
    const { bytes, made } = built(6);
    writeFileSync(file, bytes);
    const t = await serve(file);
    const live = made.filter((m) => m.key.enabled);
    const [k0, k1, k2] = [live[0]!, live[1]!, live[2]!];
    expect((await t.api('GET', `/user/api-keys/${k0.key.id}`, { key: k0.secret })).status).toBe(200);
    expect((await t.api('PATCH', `/user/api-keys/${k0.key.id}`, { key: k0.secret, body: { enabled: false } })).status).toBe(200);
    expect((await t.api('DELETE', `/user/api-keys/${k1.key.id}`, { key: k1.secret })).status).toBeLessThan(300);
    expect((await t.api('GET', `/user/api-keys/${k0.key.id}`, { key: k0.secret })).status).toBe(401);
    await t.close();
    servers.splice(0);
    const again = await serve(file);
    expect((await again.api('GET', `/user/api-keys/${k0.key.id}`, { key: k0.secret })).status).toBe(401);
    expect((await again.api('GET', `/user/api-keys/${k1.key.id}`, { key: k1.secret })).status).toBe(401);
    const mine = await again.api('GET', `/user/api-keys/${k0.key.id}`, { key: k2.secret });
    // k2 may belong to the other user; either way k2 works.
    expect([200, 404]).toContain(mine.status);
    const reset = await again.admin('POST', '/reset', {});
    expect(reset.status).toBe(200);
    expect((await again.api('GET', '/user/api-keys', { key: k2.secret })).status).toBe(401);
    const boot = reset.json.apiKey as string;
    expect((await again.api('GET', '/user/api-keys', { key: boot })).json.keys).toHaveLength(1);
    await again.close();
    servers.splice(0);
    const third = await serve(file);
    expect((await third.api('GET', '/user/api-keys', { key: k2.secret })).status).toBe(401);
    expect((await third.api('GET', '/user/api-keys', { key: boot })).json.keys).toHaveLength(1);
    expect(readFileSync(file).subarray(0, 8).toString('latin1')).toBe('SVCSNAP\n');
  });

  it('keeps the list order of same-millisecond keys across a restart after every key was warmed by auth out of order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cold-order-'));
    dirs.push(dir);
    const file = join(dir, 'state.svc');
    const store = new Store(new Clock(() => T));
    const user = store.createUser('u', 'pro').user;
    const made = [0, 1, 2].map((i) => store.createKey(user, `k${i}`, null));
    store.takeChanges();
    writeFileSync(file, encodeSnapshot({ ...store.snapshotParts(), seq: 0, extra: {} }));

    const t = await serve(file);
    for (const i of [2, 0, 1]) {
      const res = await t.api('GET', `/user/api-keys/${made[i]!.key.id}`, { key: made[i]!.secret });
      expect(res.status).toBe(200);
    }
    const before = (await t.api('GET', '/user/api-keys', { key: made[0]!.secret })).json.keys.map((k: { name: string }) => k.name);
    expect(before).toEqual(['k2', 'k1', 'k0']);
    await t.close();
    servers.splice(servers.indexOf(t), 1);

    const again = await serve(file);
    const after = (await again.api('GET', '/user/api-keys', { key: made[0]!.secret })).json.keys.map((k: { name: string }) => k.name);
    expect(after).toEqual(before);
  });
});
