// tier: in-process
import { describe, expect, it } from 'vitest';
import { Clock } from '../../src/server/clock.js';
import { decodeSnapshot, encodeSnapshot, everyKey, snapshotInSlices } from '../../src/server/snapshot.js';
import { Store, type StoredKey } from '../../src/server/store.js';

/** A store with `count` keys over a few users, some used and some disabled, on a clock the test moves. */
function storeWith(count: number) {
  let realNow = Date.parse('2026-11-25T12:00:00.000Z');
  const clock = new Clock(() => realNow);
  const store = new Store(clock);
  const users = [store.createUser('a', 'pro').user, store.createUser('b', 'free').user];
  const keys: StoredKey[] = [];
  for (let i = 0; i < count; i++) {
    const { key } = store.createKey(users[i % 2]!, `key ${i} ${i % 7 === 0 ? 'é…' : ''}`.trim(), i % 5 === 0 ? realNow + 86_400_000 : null);
    if (i % 3 === 0) store.recordUse(key);
    if (i % 4 === 0) store.setEnabled(key, false);
    keys.push(key);
  }
  store.takeChanges();
  return { store, users, keys, tick: (ms: number) => (realNow += ms) };
}

describe('a snapshot encoded in slices', () => {
  it('holds the store as it was when taken, byte for byte, whatever changes while it is encoded', async () => {
    const { store, users, keys, tick } = storeWith(10_000);
    const content = { ...store.snapshotParts(), seq: 7, extra: {} };
    const atOnce = encodeSnapshot(content);
    const later = snapshotInSlices({ ...store.snapshotParts(), seq: 7, extra: {} });
    // What changes in place, and what comes and goes, after the moment the snapshot stands for.
    tick(1_000);
    for (const key of keys.slice(0, 3_000)) {
      store.recordUse(key);
      store.setEnabled(key, !key.enabled);
    }
    store.deleteKey(keys[5_000]!);
    store.createKey(users[0]!, 'newer', null);
    store.setPlan(store.workspace(users[0]!.activeWorkspaceId)!, 'free');
    store.takeChanges()!.undo();
    tick(1_000);
    for (const key of keys.slice(6_000, 6_100)) store.recordUse(key);
    const bytes = await later();
    expect(bytes.equals(atOnce)).toBe(true);
    expect(everyKey(decodeSnapshot(bytes))).toHaveLength(10_000);
  });

  it('lets the event loop turn while it encodes a large store', async () => {
    const { store } = storeWith(20_000);
    const later = snapshotInSlices({ ...store.snapshotParts(), seq: 1, extra: {} });
    let done = false;
    let turns = 0;
    const turn = () => {
      turns++;
      if (!done) setImmediate(turn);
    };
    setImmediate(turn);
    const bytes = await later();
    done = true;
    expect(turns).toBeGreaterThan(3);
    expect(everyKey(decodeSnapshot(bytes))).toHaveLength(20_000);
  });
});
