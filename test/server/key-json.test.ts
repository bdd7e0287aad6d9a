// tier: in-process
import { describe, expect, it } from 'vitest';
import { Clock } from '../../src/server/clock.js';
import { asciiJson } from '../../src/server/http.js';
import { keyListJson, keyRecordJson } from '../../src/server/key-json.js';
import { Store, type StoredKey } from '../../src/server/store.js';

/** A store on a clock the test moves, with one user and one key. */
function world() {
  let realNow = Date.parse('2026-11-25T12:00:00.000Z');
  const clock = new Clock(() => realNow);
  const store = new Store(clock);
  const { user } = store.createUser('u', 'pro');
  const { key } = store.createKey(user, 'first', realNow + 60_000);
  return { store, user, key, tick: (ms: number) => (realNow += ms) };
}

/** What the list sends for a key, read back, against the record the rest of the API answers. */
function expectFresh(store: Store, key: StoredKey): void {
  const text = keyRecordJson(key, store.keyStatus(key));
  expect(text).toMatch(/^[\x20-\x7e]*$/);
  expect(JSON.parse(text)).toEqual(store.keyRecord(key));
  expect(text).toBe(asciiJson(store.keyRecord(key)));
}

describe('a key record as JSON text', () => {
  it('is the record JSON.stringify writes, field for field and in order, with non-ASCII escaped', () => {
    const { store, key } = world();
    const record = store.keyRecord(key);
    const text = keyRecordJson(key, store.keyStatus(key));
    expect(text).toBe(JSON.stringify(record).replace('\u2026', '\\u2026'));
    expect(text).toContain('\\u2026');
  });

  it('changes with every field that changes, however the key changed: never a stale cached record', () => {
    const { store, user, key, tick } = world();
    expectFresh(store, key);
    // Used: lastUsedAt moves, in another millisecond and in the same one as another key's use.
    tick(5);
    store.recordUse(key);
    expectFresh(store, key);
    const other = store.createKey(user, 'other', null).key;
    store.recordUse(other);
    expectFresh(store, other);
    expectFresh(store, key);
    // Disabled and enabled again through the store.
    store.setEnabled(key, false);
    expectFresh(store, key);
    expect(JSON.parse(keyRecordJson(key, store.keyStatus(key)))).toMatchObject({ enabled: false, status: 'disabled' });
    store.setEnabled(key, true);
    expectFresh(store, key);
    // Renamed and re-anchored in place, as a reload or an undo assigns fields (store.replace, putBack).
    Object.assign(key, { name: 'renamed “quoted”\n' });
    expectFresh(store, key);
    Object.assign(key, { workspaceId: 'ws_elsewhere', createdAt: key.createdAt - 1_000, hint: 'sk_zzzz\u2026zzzz' });
    expectFresh(store, key);
    Object.assign(key, { expiresAt: key.expiresAt! + 1_000 });
    expectFresh(store, key);
    // Expiry: the clock passes expiresAt with nothing about the key changing, enabled and disabled alike.
    tick(61_000);
    expect(store.keyStatus(key)).toBe('expired');
    expectFresh(store, key);
    store.setEnabled(key, false);
    expectFresh(store, key);
    Object.assign(key, { expiresAt: null });
    expectFresh(store, key);
  });

  it('a page of them is the KeyList the contract describes', () => {
    const { store, user, key } = world();
    const other = store.createKey(user, 'other', null).key;
    const records = [other, key].map((k) => keyRecordJson(k, store.keyStatus(k)));
    expect(JSON.parse(keyListJson(records, null))).toEqual({ keys: [store.keyRecord(other), store.keyRecord(key)], nextCursor: null });
    expect(JSON.parse(keyListJson([], 'abc.1'))).toEqual({ keys: [], nextCursor: 'abc.1' });
  });

  it('asciiJson escapes every character past ASCII, surrogate pairs included, and reads back the same', () => {
    const value = { s: 'é…\u{1F600}\u2028x', lone: '\ud800' };
    const text = asciiJson(value);
    expect(text).toMatch(/^[\x00-\x7f]*$/);
    expect(JSON.parse(text)).toEqual(value);
  });
});
