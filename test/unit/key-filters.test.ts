// tier: in-process
import { describe, expect, it } from 'vitest';
import { readKey } from '../../src/client/key-view.js';
import { matchesFilter, matchesPrune, unjudgedByFilter, unjudgedByPrune } from '../../src/cli/domain/key-filters.js';

const now = Date.parse('2026-11-22T12:00:00.000Z');
const DAY = 86_400_000;
const key = (record: Record<string, unknown>) => readKey({ id: 'k', name: 'Nightly CI', enabled: true, createdAt: now - 200 * DAY, ...record });

describe('keys list filters (docs/contract.md §C8)', () => {
  it('--expiring includes a key that expires exactly at the edge, and expired ones; not one just past it or one that never expires', () => {
    const week = { expiringWithinMs: 7 * DAY };
    expect(matchesFilter(key({ expiresAt: now + 7 * DAY }), week, now)).toBe(true);
    expect(matchesFilter(key({ expiresAt: now - DAY }), week, now)).toBe(true);
    expect(matchesFilter(key({ expiresAt: now + 7 * DAY + 1 }), week, now)).toBe(false);
    expect(matchesFilter(key({ expiresAt: null }), week, now)).toBe(false);
  });

  it('--status reads the server\'s word or derives it; --name is a substring in any case; all must match', () => {
    expect(matchesFilter(key({ status: 'disabled' }), { status: 'disabled' }, now)).toBe(true);
    expect(matchesFilter(key({ enabled: false }), { status: 'disabled' }, now)).toBe(true);
    expect(matchesFilter(key({ expiresAt: now }), { status: 'expired' }, now)).toBe(true);
    expect(matchesFilter(key({}), { name: 'ci' }, now)).toBe(true);
    expect(matchesFilter(key({}), { name: 'ci', status: 'disabled' }, now)).toBe(false);
    expect(matchesFilter(readKey({ id: 'k' }), { name: 'x' }, now)).toBe(false);
  });
});

describe('keys prune criteria (docs/contract.md §C8)', () => {
  it('--unused-for goes by last use, else by creation; the exact edge counts', () => {
    const ninety = { unusedForMs: 90 * DAY };
    expect(matchesPrune(key({ lastUsedAt: now - 90 * DAY }), ninety, now)).toBe(true);
    expect(matchesPrune(key({ lastUsedAt: now - 90 * DAY + 1 }), ninety, now)).toBe(false);
    expect(matchesPrune(key({ lastUsedAt: null }), ninety, now)).toBe(true);
    expect(matchesPrune(key({ lastUsedAt: null, createdAt: now - DAY }), ninety, now)).toBe(false);
  });

  it('a server that does not say when a key was used gives no ground to prune it as unused', () => {
    expect(matchesPrune(key({}), { unusedForMs: DAY }, now)).toBe(false);
  });

  it('--expired and --disabled, together only what is both', () => {
    expect(matchesPrune(key({ expiresAt: now - 1 }), { expired: true }, now)).toBe(true);
    expect(matchesPrune(key({ enabled: false }), { disabled: true }, now)).toBe(true);
    expect(matchesPrune(key({ enabled: false }), { disabled: true, expired: true }, now)).toBe(false);
    expect(matchesPrune(key({ enabled: false, expiresAt: now - 1 }), { disabled: true, expired: true }, now)).toBe(true);
  });
});

describe('what a filter could not judge', () => {
  it('counts, per filter given, the keys that show no value for the field it reads', () => {
    const keys = [key({ expiresAt: null }), readKey({ id: 'a' }), readKey({ id: 'b', status: 'enabled' }), readKey({ id: 'c', enabled: true, lastUsedAt: null })];
    expect(unjudgedByFilter(keys, { expiringWithinMs: DAY, status: 'enabled', name: 'x' }, now)).toEqual([
      { flag: '--expiring', field: 'expiry time', count: 3 },
      { flag: '--status', field: 'state', count: 1 },
      { flag: '--name', field: 'name', count: 3 },
    ]);
    expect(unjudgedByFilter(keys, {}, now)).toEqual([]);
    expect(unjudgedByPrune(keys, { expired: true, disabled: true, unusedForMs: DAY })).toEqual([
      { flag: '--expired', field: 'expiry time or state', count: 2 },
      { flag: '--disabled', field: 'on/off state', count: 1 },
      { flag: '--unused-for', field: 'last use', count: 4 },
    ]);
  });
});
