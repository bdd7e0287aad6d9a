// tier: in-process
/**
 * A served data file whose keys share one millisecond: warming every key by
 * authenticating with it, out of file order, then a restart, must not change
 * the newest-first list.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { Clock } from '../../src/server/clock.js';
import { encodeSnapshot } from '../../src/server/snapshot.js';
import { Store } from '../../src/server/store.js';
import { startTestServer, type TestServer } from './helpers.js';

const dirs: string[] = [];
const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function serve(dataFile: string): Promise<TestServer> {
  const t = await startTestServer({ plan: 'pro', dataFile, logWarning: () => {} });
  servers.push(t);
  return t;
}

it('keeps the list order of same-millisecond keys across a restart after every key was warmed by auth out of order', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cold-order-'));
  dirs.push(dir);
  const file = join(dir, 'state.svc');
  const store = new Store(new Clock(() => Date.parse('2026-11-25T12:00:00.000Z')));
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
