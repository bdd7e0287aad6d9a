// tier: in-process
/**
 * The order keys were added in, which breaks ties of one millisecond in a
 * list, survives every way a cold key can become an object (a lookup out of
 * order, a journal record replacing it, a reset undone) and a restart; and
 * the loader names both records of a duplicate.
 */
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { Clock } from '../../src/server/clock.js';
import { Replay } from '../../src/server/journal.js';
import { decodeSnapshot, encodeSnapshot, everyKey, SnapshotError } from '../../src/server/snapshot.js';
import { KEY_FIXED } from '../../src/server/snapshot-keys.js';
import { Store, type StoredKey } from '../../src/server/store.js';

const T = Date.parse('2026-11-25T12:00:00.000Z');

/** A store on a frozen clock: every key is created in the same millisecond. */
function sameMillisecondStore(count: number, users = 1) {
  const clock = new Clock(() => T);
  const store = new Store(clock);
  const us = Array.from({ length: users }, (_, i) => store.createUser(`u${i}`, 'pro').user);
  const keys: StoredKey[] = [];
  for (let i = 0; i < count; i++) keys.push(store.createKey(us[i % users]!, `k${i}`, i % 2 ? T + 86_400_000 : null).key);
  store.takeChanges();
  return { store, clock, users: us, keys };
}

const bytesOf = (store: Store) => encodeSnapshot({ ...store.snapshotParts(), seq: 0, extra: {} });
const reload = (bytes: Buffer, clock: Clock) => Store.load(decodeSnapshot(bytes), clock);

/** Rewrites the trailing CRC-32 so the checksum holds over hostile bytes. */
function fixCrc(bytes: Buffer): Buffer {
  bytes.writeUInt32LE(crc32(bytes.subarray(0, bytes.length - 4)), bytes.length - 4);
  return bytes;
}

/** Where key record 0 begins in a v2 snapshot. */
function firstRecord(bytes: Buffer): number {
  const headerLength = bytes.readUInt32LE(8);
  return 8 + 4 + headerLength + 4;
}
const FLAGS_AT = 24 + 8 + 32 + 8;
const TIMES_AT = FLAGS_AT + 1;

describe('order of keys created in the same millisecond across restarts', () => {
  it('a snapshot of a store whose cold keys were all warmed out of order is the same as one never warmed', () => {
    const { store, clock, keys } = sameMillisecondStore(3);
    const original = bytesOf(store);
    const loaded = reload(original, clock);
    // Warm by auth lookups in the order 2, 0, 1: the last one empties the cold set.
    for (const i of [2, 0, 1]) expect(loaded.keyByHash(keys[i]!.hash)?.id).toBe(keys[i]!.id);
    expect(bytesOf(loaded).equals(original)).toBe(true);
  });

  it('the newest-first list is the same after a restart once every cold key was warmed out of order', () => {
    const { store, clock, users, keys } = sameMillisecondStore(3);
    const loaded = reload(bytesOf(store), clock);
    for (const i of [2, 0, 1]) loaded.keyByHash(keys[i]!.hash);
    const before = loaded.userKeys(loaded.user(users[0]!.id)!).map((k) => k.id);
    const again = reload(bytesOf(loaded), clock);
    expect(again.userKeys(again.user(users[0]!.id)!).map((k) => k.id)).toEqual(before);
  });

  it('partly warm: a snapshot is byte-identical to the never-warmed one', () => {
    const { store, clock, keys } = sameMillisecondStore(5);
    const original = bytesOf(store);
    const loaded = reload(original, clock);
    loaded.keyByHash(keys[3]!.hash);
    loaded.keyByHash(keys[1]!.hash);
    expect(bytesOf(loaded).equals(original)).toBe(true);
  });

  it('journal replacing every cold key, a new key first: the snapshot keeps the added order', () => {
    const { store, clock, users, keys } = sameMillisecondStore(2);
    const file = bytesOf(store);
    // Runtime after the load: a new key, then key 0 disabled (as the journal would carry them).
    const live = reload(file, clock);
    const extra = live.createKey(live.user(users[0]!.id)!, 'new', null).key;
    live.setEnabled(live.userKey(live.user(users[0]!.id)!, keys[0]!.id)!, false);
    live.setEnabled(live.userKey(live.user(users[0]!.id)!, keys[1]!.id)!, false);
    const ops = live.takeChanges()!.ops;
    // Start-up from the same snapshot plus that journal record.
    const replay = new Replay(decodeSnapshot(file));
    replay.apply(1, ops);
    const restarted = Store.load(replay.state(), clock);
    expect(restarted.userKey(restarted.user(users[0]!.id)!, extra.id)).toBeDefined();
    // The file order is the order keys were added: the snapshot's two, then the new one.
    expect(everyKey(decodeSnapshot(bytesOf(restarted))).map((k) => k.id)).toEqual([keys[0]!.id, keys[1]!.id, extra.id]);
  });

  it('a failed reset undone: the snapshot keeps the added order', () => {
    const { store, clock, users, keys } = sameMillisecondStore(3);
    const original = bytesOf(store);
    const loaded = reload(original, clock);
    loaded.keyByHash(keys[2]!.hash);
    loaded.reset('free');
    loaded.takeChanges()!.undo();
    expect(loaded.userKeys(loaded.user(users[0]!.id)!).map((k) => k.id)).toEqual([keys[2]!.id, keys[1]!.id, keys[0]!.id]);
    expect(bytesOf(loaded).equals(original)).toBe(true);
  });
});

describe('hostile snapshot bytes with a correct CRC', () => {
  function base() {
    const { store, keys } = sameMillisecondStore(2);
    return { bytes: bytesOf(store), keys };
  }

  it('refuses a createdAt of -0', () => {
    const { bytes } = base();
    bytes.writeDoubleLE(-0, firstRecord(bytes) + TIMES_AT);
    expect(() => decodeSnapshot(fixCrc(bytes))).toThrow(SnapshotError);
  });

  it('names both records when two keys share a hash', () => {
    const { bytes } = base();
    const at = firstRecord(bytes);
    const second = at + KEY_FIXED + 2;
    bytes.copy(bytes, second + 32, at + 32, at + 64);
    expect(() => decodeSnapshot(fixCrc(bytes))).toThrow(/keys\[1\]/);
  });
});
