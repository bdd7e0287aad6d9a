// tier: in-process
/**
 * A version 2 snapshot's keys stay in its bytes until first asked for
 * (src/server/snapshot-keys.ts). What a store loaded that way answers, and
 * what it saves, must be what a store holding every key as an object
 * answers and saves, whatever was warmed, changed or revoked in between;
 * and a file the API could not have written is refused whole, naming the
 * record, as the version 1 loader refuses one.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { Clock } from '../../src/server/clock.js';
import { encodeEntry } from '../../src/server/journal.js';
import { journalPath, readState, StateFileError } from '../../src/server/persistence.js';
import { decodeSnapshot, encodeSnapshot, everyKey, savedKey, snapshotInSlices } from '../../src/server/snapshot.js';
import { KEY_FIXED } from '../../src/server/snapshot-keys.js';
import { Store, type StoredKey, type UserState } from '../../src/server/store.js';

const START = Date.parse('2026-11-25T12:00:00.000Z');

/** Random bytes from a seed, the same for two stores made with the same seed: both then mint the same ids and secrets. */
function seeded(seed: number): (size: number) => Buffer {
  let state = seed >>> 0 || 1;
  return (size) => {
    const out = Buffer.alloc(size);
    for (let i = 0; i < size; i++) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      out[i] = state & 0xff;
    }
    return out;
  };
}

interface World {
  store: Store;
  clock: { now: number };
  users: UserState[];
  secrets: string[];
}

/**
 * A store of `count` keys over three users on a clock that moves only when
 * told: many keys share a millisecond, so list order within one rests on
 * the order keys were added. Names, expiry, use and state vary.
 */
function world(count: number, seed = 7): World {
  const clock = { now: START };
  const store = new Store(new Clock(() => clock.now), seeded(seed));
  const users = [store.createUser('a', 'pro').user, store.createUser('b', 'free').user, store.createUser('c', 'pro').user];
  const secrets: string[] = [];
  for (let i = 0; i < count; i++) {
    if (i % 4 === 0) clock.now += 1;
    const { key, secret } = store.createKey(users[i % 3]!, i % 5 === 0 ? `ключ ${i} 🔑` : `key ${i}`, i % 6 === 0 ? clock.now + 3_600_000 : null);
    if (i % 3 === 0) store.recordUse(key);
    if (i % 7 === 0) store.setEnabled(key, false);
    secrets.push(secret);
  }
  store.takeChanges();
  return { store, clock, users, secrets };
}

const bytesOf = (store: Store, seq = 3) => encodeSnapshot({ ...store.snapshotParts(), seq, extra: {} });

/** Two stores from one snapshot, minting alike: one with every key cold, one with every key an object from the start. */
function twins(bytes: Buffer, clock: { now: number }, seed: number): { cold: Store; warm: Store } {
  const whole = decodeSnapshot(bytes);
  return {
    cold: Store.load(decodeSnapshot(bytes), new Clock(() => clock.now), seeded(seed)),
    warm: Store.load({ ...whole, keys: everyKey(whole), cold: null }, new Clock(() => clock.now), seeded(seed)),
  };
}

/** Everything a client can see of a user's keys: the list, page by page, as the API serves it. */
function listing(store: Store, user: UserState, limit: number): unknown[] {
  const seen: unknown[] = [];
  let after = null;
  for (;;) {
    const page = store.keyPage(user, limit, after);
    seen.push(...page.keys.map((k) => ({ ...store.keyRecord(k), hash: k.hash, added: k.added })));
    if (!page.next) return seen;
    after = page.next;
  }
}

const hashOf = (secret: string) => createHash('sha256').update(secret).digest('hex');

type Op =
  | { kind: 'auth'; key: number }
  | { kind: 'byId'; key: number }
  | { kind: 'list'; user: number; limit: number }
  | { kind: 'create'; user: number }
  | { kind: 'revoke'; key: number }
  | { kind: 'toggle'; key: number }
  | { kind: 'use'; key: number }
  | { kind: 'tick' }
  | { kind: 'undo' }
  | { kind: 'save' };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('auth' as const), key: fc.nat(80) }),
  fc.record({ kind: fc.constant('byId' as const), key: fc.nat(80) }),
  fc.record({ kind: fc.constant('list' as const), user: fc.nat(2), limit: fc.integer({ min: 1, max: 9 }) }),
  fc.record({ kind: fc.constant('create' as const), user: fc.nat(2) }),
  fc.record({ kind: fc.constant('revoke' as const), key: fc.nat(80) }),
  fc.record({ kind: fc.constant('toggle' as const), key: fc.nat(80) }),
  fc.record({ kind: fc.constant('use' as const), key: fc.nat(80) }),
  fc.constant({ kind: 'tick' as const }),
  fc.constant({ kind: 'undo' as const }),
  fc.constant({ kind: 'save' as const }),
);

/** Applies one operation to a store, as the API's handlers would; returns what a client would see of it. */
function apply(store: Store, users: UserState[], secrets: string[], o: Exclude<Op, { kind: 'tick' }>): unknown {
  const keyOf = (i: number) => (secrets.length === 0 ? undefined : store.keyByHash(hashOf(secrets[i % secrets.length]!)));
  switch (o.kind) {
    case 'auth': {
      const key = keyOf(o.key);
      return key && { id: key.id, usable: key.enabled && !store.isExpired(key) };
    }
    case 'byId': {
      const id = keyOf(o.key)?.id ?? 'key_00000000000000000000';
      return users.map((u) => store.userKey(u, id)?.id ?? null);
    }
    case 'list':
      return listing(store, users[o.user]!, o.limit);
    case 'create': {
      const { key, secret } = store.createKey(users[o.user]!, `new ${secrets.length}`, null);
      secrets.push(secret);
      return store.keyRecord(key);
    }
    case 'revoke': {
      const key = keyOf(o.key);
      if (key) store.deleteKey(key);
      return key?.id ?? null;
    }
    case 'toggle': {
      const key = keyOf(o.key);
      if (key) store.setEnabled(key, !key.enabled);
      return key?.enabled ?? null;
    }
    case 'use': {
      const key = keyOf(o.key);
      if (key) store.recordUse(key);
      return key?.lastUsedAt ?? null;
    }
    case 'undo':
      store.takeChanges()?.undo();
      return null;
    case 'save':
      return store.takeChanges()?.ops.length ?? 0;
  }
}

describe('a snapshot loaded cold', () => {
  it('answers, lists and saves as the same snapshot loaded whole, whatever is warmed, changed or revoked', () => {
    const base = world(60);
    const bytes = bytesOf(base.store);
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), fc.nat(1000), (ops, seed) => {
        const clock = { now: base.clock.now };
        const { cold, warm } = twins(bytes, clock, seed);
        const secrets = [[...base.secrets], [...base.secrets]];
        const users = base.users.map((u) => cold.user(u.id)!);
        const warmUsers = base.users.map((u) => warm.user(u.id)!);
        for (const o of ops) {
          // The twins share one clock: it moves once for both.
          if (o.kind === 'tick') {
            clock.now += 1;
            continue;
          }
          const seenCold = apply(cold, users, secrets[0]!, o);
          const seenWarm = apply(warm, warmUsers, secrets[1]!, o);
          expect(seenCold).toEqual(seenWarm);
        }
        for (const [i, user] of users.entries()) expect(listing(cold, user, 7)).toEqual(listing(warm, warmUsers[i]!, 7));
        expect(bytesOf(cold).equals(bytesOf(warm))).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('saves a partly warm store byte for byte as it saves the same store with every key warmed', () => {
    const base = world(300);
    const clock = { now: base.clock.now };
    const store = Store.load(decodeSnapshot(bytesOf(base.store)), new Clock(() => clock.now));
    // Warm some keys out of order, change a few of them, revoke one: the saved order is still the order keys were added.
    for (const i of [250, 3, 149, 77]) store.keyByHash(hashOf(base.secrets[i]!));
    store.recordUse(store.keyByHash(hashOf(base.secrets[250]!))!);
    store.deleteKey(store.keyByHash(hashOf(base.secrets[149]!))!);
    store.createKey(store.user(base.users[0]!.id)!, 'later', null);
    store.takeChanges();
    const partly = bytesOf(store);
    for (const user of base.users) listing(store, store.user(user.id)!, 1000);
    expect(bytesOf(store).equals(partly)).toBe(true);
  });

  it('keeps keys of one millisecond in their order over restarts, warmed or not', () => {
    const clock = { now: START };
    const first = new Store(new Clock(() => clock.now), seeded(3));
    const { user } = first.createUser('a', 'pro');
    const secrets = Array.from({ length: 12 }, (_, i) => first.createKey(user, `same ms ${i}`, null).secret);
    first.takeChanges();
    const order = listing(first, user, 5).map((k) => (k as { id: string }).id);
    let bytes = bytesOf(first);
    for (const warmed of [[5], [0, 11], [7, 2, 9], []]) {
      const store = Store.load(decodeSnapshot(bytes), new Clock(() => clock.now));
      for (const i of warmed) store.keyByHash(hashOf(secrets[i]!));
      expect(listing(store, store.user(user.id)!, 5).map((k) => (k as { id: string }).id)).toEqual(order);
      bytes = bytesOf(store);
    }
  });

  it('holds a snapshot taken in slices to the moment it was taken, while cold keys warm, change and go', async () => {
    const base = world(5_000);
    const clock = { now: base.clock.now };
    const store = Store.load(decodeSnapshot(bytesOf(base.store)), new Clock(() => clock.now));
    const atOnce = bytesOf(store, 9);
    const later = snapshotInSlices({ ...store.snapshotParts(), seq: 9, extra: {} });
    clock.now += 1_000;
    for (const secret of base.secrets.slice(0, 1_500)) {
      const key = store.keyByHash(hashOf(secret))!;
      store.recordUse(key);
      store.setEnabled(key, !key.enabled);
    }
    store.deleteKey(store.keyByHash(hashOf(base.secrets[4_000]!))!);
    store.createKey(store.user(base.users[1]!.id)!, 'newer', null);
    expect((await later()).equals(atOnce)).toBe(true);
  });

  it('finds nothing for a digest or an id of another shape, and warms nothing for them', () => {
    const base = world(20);
    const state = decodeSnapshot(bytesOf(base.store));
    const store = Store.load(state, new Clock(() => START));
    for (const digest of ['', 'zz', '0'.repeat(63), '0'.repeat(64), 'f'.repeat(66), hashOf('sk_nobody')]) expect(store.keyByHash(digest)).toBeUndefined();
    for (const id of ['', 'key_', `key_${'A'.repeat(20)}`, `usr_${'a'.repeat(20)}`, `key_${'a'.repeat(21)}`, 'key_\u0100'.padEnd(24, 'a')]) {
      expect(store.userKey(store.user(base.users[0]!.id)!, id)).toBeUndefined();
    }
    expect(state.cold!.size).toBe(20);
  });

  it('does not tell a cold key of another user from a missing one, and leaves it where it was', () => {
    const base = world(6);
    const store = Store.load(decodeSnapshot(bytesOf(base.store)), new Clock(() => START));
    const theirs = base.store.keyByHash(hashOf(base.secrets[1]!))!;
    expect(store.userKey(store.user(base.users[0]!.id)!, theirs.id)).toBeUndefined();
    expect(store.userKey(store.user(base.users[1]!.id)!, theirs.id)?.name).toBe(theirs.name);
  });
});

describe('the journal over a cold snapshot', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function dataFile(bytes: Buffer, entries: unknown[][]): string {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cold-'));
    dirs.push(dir);
    const path = join(dir, 'state.svc');
    writeFileSync(path, bytes);
    writeFileSync(journalPath(path, 1), Buffer.concat(entries.map((ops, i) => encodeEntry(4 + i, ops as never))));
    return path;
  }

  it('replaces and revokes cold keys, and a reset drops them all', async () => {
    const base = world(9);
    const bytes = bytesOf(base.store);
    const key = (i: number) => base.store.keyByHash(hashOf(base.secrets[i]!))!;
    const renamed = { ...savedKey(key(2)), enabled: !key(2).enabled };
    const path = dataFile(bytes, [[{ key: renamed }], [{ revoke: key(5).id }]]);
    const saved = (await readState(path))!;
    expect(saved.replayed).toBe(2);
    const store = Store.load(saved.state, new Clock(() => START));
    expect(everyKey(saved.state).map((k) => k.id)).toEqual(base.secrets.map((_, i) => key(i).id).filter((id) => id !== key(5).id));
    expect(store.keyByHash(key(2).hash)!.enabled).toBe(renamed.enabled);
    expect(store.keyByHash(key(5).hash)).toBeUndefined();
    // The replaced key keeps its place among keys of its millisecond.
    const user = store.user(key(2).userId)!;
    expect(store.userKeys(user).map((k) => k.id)).toEqual(base.store.userKeys(base.store.user(user.id)!).map((k) => k.id).filter((id) => id !== key(5).id));

    const reset = (await readState(dataFile(bytes, [[{ reset: true }, { workspace: { id: `ws_${'r'.repeat(20)}`, name: 'Personal', plan: 'free' } }, { user: { id: `usr_${'r'.repeat(20)}`, name: 'r', activeWorkspaceId: `ws_${'r'.repeat(20)}`, workspaceIds: [`ws_${'r'.repeat(20)}`] } }]])))!;
    expect(reset.state.cold).toBeNull();
    expect(Store.load(reset.state, new Clock(() => START)).keyByHash(key(0).hash)).toBeUndefined();
  });

  it('refuses a journal key whose hash a cold key holds', async () => {
    const base = world(4);
    const key = (i: number) => base.store.keyByHash(hashOf(base.secrets[i]!))!;
    const clash = { ...savedKey(key(3)), id: `key_${'z'.repeat(20)}`, hash: key(1).hash };
    const read = readState(dataFile(bytesOf(base.store), [[{ key: clash }]]));
    await expect(read).rejects.toBeInstanceOf(StateFileError);
    await expect(read).rejects.toThrow('two keys share a hash');
  });
});

describe('a version 2 snapshot the API could not have written', () => {
  /** The snapshot of a small store, and where each key's record begins. */
  function written() {
    const base = world(4);
    const bytes = bytesOf(base.store);
    const first = 8 + 4 + bytes.readUInt32LE(8) + 4;
    const at: number[] = [];
    for (let p = first, i = 0; i < 4; i++) {
      at.push(p);
      p += KEY_FIXED + bytes.readUInt16LE(p + KEY_FIXED - 2);
    }
    const ids = at.map((p) => bytes.toString('latin1', p, p + 24));
    return { bytes, at, ids, end: bytes.length - 4 };
  }

  /** The bytes with the checksum made right again: only the loader's own checks stand between them and the store. */
  function sealed(bytes: Buffer): Buffer {
    const out = Buffer.from(bytes);
    out.writeUInt32LE(crc32(out.subarray(0, out.length - 4)), out.length - 4);
    return out;
  }

  /** Replaces the name of record `i` (its length field and bytes), moving what follows. */
  function withName(bytes: Buffer, p: number, name: Buffer): Buffer {
    const length = bytes.readUInt16LE(p + KEY_FIXED - 2);
    const head = Buffer.from(bytes.subarray(0, p + KEY_FIXED));
    head.writeUInt16LE(name.length, p + KEY_FIXED - 2);
    return Buffer.concat([head, name, bytes.subarray(p + KEY_FIXED + length)]);
  }

  const USER = 24;
  const WORKSPACE = 28;
  const HASH = 32;
  const HINT = 64;
  const FLAGS = 72;
  const CREATED = 73;
  const EXPIRES = 81;

  it.each<[string, (w: ReturnType<typeof written>) => [Buffer, string]]>([
    ['a key id with a capital', ({ bytes, at }) => ((bytes[at[1]! + 10] = 0x41), [bytes, 'keys[1]: "id" is not a key id as the server makes them (key_ and 20 of 0-9, a-z)'])],
    ['a key id of another prefix', ({ bytes, at }) => ((bytes[at[0]!] = 0x75), [bytes, 'keys[0]: "id" is not a key id'])],
    ['a user place past the list', ({ bytes, at, ids }) => (bytes.writeUInt32LE(3, at[2]! + USER), [bytes, `keys[2] (${ids[2]}): "userId" names an unknown user`])],
    ['a workspace place past the list', ({ bytes, at, ids }) => (bytes.writeUInt32LE(0xffffffff, at[2]! + WORKSPACE), [bytes, `keys[2] (${ids[2]}): "workspaceId" names an unknown workspace`])],
    ['a key in a workspace not its user\'s', ({ bytes, at, ids }) => (bytes.writeUInt32LE((bytes.readUInt32LE(at[0]! + WORKSPACE) + 1) % 3, at[0]! + WORKSPACE), [bytes, `keys[0] (${ids[0]}): "workspaceId" is not one of its user's workspaces`])],
    ['a hint with a dot', ({ bytes, at, ids }) => ((bytes[at[3]! + HINT + 2] = 0x2e), [bytes, `keys[3] (${ids[3]}): "hint" is not of the form sk_abcd\u2026wxyz`])],
    ['a creation time of NaN', ({ bytes, at, ids }) => (bytes.writeDoubleLE(Number.NaN, at[1]! + CREATED), [bytes, `keys[1] (${ids[1]}): "createdAt" is not a time the server could have stamped`])],
    ['a creation time with a fraction', ({ bytes, at, ids }) => (bytes.writeDoubleLE(START + 0.5, at[1]! + CREATED), [bytes, `keys[1] (${ids[1]}): "createdAt" is not a time`])],
    ['a creation time past the year 9999', ({ bytes, at, ids }) => (bytes.writeDoubleLE(Date.UTC(10000, 0, 1), at[1]! + CREATED), [bytes, `keys[1] (${ids[1]}): "createdAt" is not a time`])],
    ['an expiry of Infinity', ({ bytes, at, ids }) => ((bytes[at[1]! + FLAGS] |= 2), bytes.writeDoubleLE(Infinity, at[1]! + EXPIRES), [bytes, `keys[1] (${ids[1]}): "expiresAt" is not a time`])],
    ['a flag the format does not have', ({ bytes, at, ids }) => ((bytes[at[0]! + FLAGS] |= 8), [bytes, `keys[0] (${ids[0]}): its flags byte has a bit the format does not have`])],
    ['an absent expiry with bytes in its place', ({ bytes, at, ids }) => ((bytes[at[1]! + FLAGS] &= ~2), bytes.writeDoubleLE(START, at[1]! + EXPIRES), [bytes, `keys[1] (${ids[1]}): "expiresAt" is not a time`])],
    ['an expiry at its creation', ({ bytes, at, ids }) => (bytes.writeDoubleLE(bytes.readDoubleLE(at[0]! + CREATED), at[0]! + EXPIRES), [bytes, `keys[0] (${ids[0]}): "expiresAt" is not after "createdAt", as the API requires`])],
    ['an empty name', ({ bytes, at, ids }) => [withName(bytes, at[2]!, Buffer.alloc(0)), `keys[2] (${ids[2]}): "name" must be 1 to 100 characters after trimming`]],
    ['a name with an escape', ({ bytes, at, ids }) => [withName(bytes, at[2]!, Buffer.from('a\u001b[2Jb')), `keys[2] (${ids[2]}): "name" must not contain control characters`]],
    ['a name the API would have trimmed', ({ bytes, at, ids }) => [withName(bytes, at[0]!, Buffer.from('padded ')), `keys[0] (${ids[0]}): "name" begins or ends with white space`]],
    ['a name that is not UTF-8', ({ bytes, at, ids }) => [withName(bytes, at[3]!, Buffer.from([0x61, 0xff, 0x62])), `keys[3] (${ids[3]}): "name" is not UTF-8`]],
    ['a name of 101 code points', ({ bytes, at, ids }) => [withName(bytes, at[3]!, Buffer.from('é'.repeat(101))), `keys[3] (${ids[3]}): "name" must be 1 to 100 characters`]],
    ['a name running past the end', ({ bytes, at, ids }) => (bytes.writeUInt16LE(0xffff, at[3]! + KEY_FIXED - 2), [bytes, `keys[3] (${ids[3]}) runs past the end of the file`])],
    ['bytes after the last key', ({ bytes, end }) => [Buffer.concat([bytes.subarray(0, end), Buffer.from('x'), bytes.subarray(end)]), 'it has bytes after its last key']],
    ['a key count larger than the file holds', ({ bytes, at }) => (bytes.writeUInt32LE(0xffffffff, at[0]! - 4), [bytes, 'runs past the end of the file'])],
    ['two keys with one id', ({ bytes, at }) => (bytes.copy(bytes, at[3]!, at[1]!, at[1]! + 24), [bytes, 'two keys share an id'])],
    ['two keys with one hash', ({ bytes, at }) => (bytes.copy(bytes, at[2]! + HASH, at[0]! + HASH, at[0]! + HASH + 32), [bytes, 'two keys share a hash'])],
  ])('refuses %s, naming the record', (_, spoil) => {
    const [bytes, problem] = spoil(written());
    expect(() => decodeSnapshot(sealed(bytes))).toThrow(problem);
  });

  it('takes a name of 100 code points and one of other scripts, as the API does', () => {
    const w = written();
    const name = '\u{1F600}'.repeat(100);
    const state = decodeSnapshot(sealed(withName(w.bytes, w.at[1]!, Buffer.from(name))));
    expect(everyKey(state)[1]!.name).toBe(name);
  });

  it('reads a key as it was written, field by field', () => {
    const base = world(30);
    const state = decodeSnapshot(bytesOf(base.store));
    const stored = (k: StoredKey) => ({ ...savedKey(k), added: k.added });
    const expected = base.store.userKeys(base.users[0]!).concat(base.store.userKeys(base.users[1]!), base.store.userKeys(base.users[2]!));
    expect(everyKey(state).map((k) => stored(k as StoredKey)).sort((a, b) => a.added - b.added)).toEqual(expected.map(stored).sort((a, b) => a.added - b.added));
  });
});
