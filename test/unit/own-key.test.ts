// tier: in-process
import { describe, expect, it } from 'vitest';
import type { KeyList } from '../../src/client/api.js';
import { readKey } from '../../src/client/key-view.js';
import { sortOut, type Wanted } from '../../src/cli/domain/own-key.js';

// Which keys of a list a lost create made (docs/contract.md §C4): by the mark svc drew, and only that.

const began = Date.parse('2026-12-01T10:00:00.000Z');
const mark = Date.parse('2026-12-01T11:00:00.000Z') - 4_321;
const wanted: Wanted = { name: 'deploy', marks: { name: false, expiresAtMs: mark }, beganMs: began, existing: [] };

function list(...records: Record<string, unknown>[]): KeyList {
  const documents = records.map((record, i) => ({ id: `key_${i}`, name: 'deploy', createdAt: new Date(began + 100 + i).toISOString(), ...record }));
  return { documents, keys: documents.map(readKey), body: { keys: documents }, pages: 1, nowMs: began + 1_000, incomplete: null };
}

const at = (ms: number) => new Date(ms).toISOString();

describe("a lost create's own key", () => {
  it('is the one key that carries its mark; the others of that name are another job\'s, not even candidates', () => {
    const sighting = sortOut(list({ expiresAt: at(mark) }, { expiresAt: at(mark + 17) }), wanted, began);
    expect(sighting.orphans.map((key) => key.id)).toEqual(['key_0']);
    expect(sighting.candidates).toEqual([]);
  });

  it('two keys that carry the mark: one create makes one key, so another job drew the same, and neither is taken for svc\'s', () => {
    const sighting = sortOut(list({ expiresAt: at(mark) }, { expiresAt: at(mark) }), wanted, began);
    expect(sighting.orphans).toEqual([]);
    expect(sighting.candidates.map((key) => key.id)).toEqual(['key_0', 'key_1']);
    expect(sighting.collided).toBe(true);
  });

  it('none with the mark, from a server that keeps an expiry\'s milliseconds: the others are another job\'s, named to nobody', () => {
    const sighting = sortOut(list({ expiresAt: at(mark + 17) }, { expiresAt: at(mark - 230) }), wanted, began);
    expect(sighting.orphans).toEqual([]);
    expect(sighting.candidates).toEqual([]);
  });

  it('none with the mark, from a server that rounds expiries to the second: the mark may be lost, so they are candidates', () => {
    const rounded = Math.floor(mark / 1000) * 1000;
    const sighting = sortOut(list({ expiresAt: at(rounded) }, { expiresAt: at(rounded + 60_000) }), wanted, began);
    expect(sighting.orphans).toEqual([]);
    expect(sighting.candidates.map((key) => key.id)).toEqual(['key_0', 'key_1']);
  });

  it('a key someone used is nobody\'s orphan, mark or not', () => {
    const sighting = sortOut(list({ expiresAt: at(mark), lastUsedAt: at(began + 500) }), wanted, began);
    expect(sighting.orphans).toEqual([]);
  });
});
