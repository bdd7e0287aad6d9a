// tier: in-process
import { describe, expect, it } from 'vitest';
import { readKey } from '../../src/client/key-view.js';
import { judgeKey } from '../../src/cli/operations/audit.js';

const now = Date.parse('2026-11-22T12:00:00.000Z');
const DAY = 86_400_000;
const key = (record: Record<string, unknown>) => readKey({ id: 'k', enabled: true, createdAt: now - 10 * DAY, expiresAt: now + 60 * DAY, lastUsedAt: now - DAY, ...record });
const rules = (record: Record<string, unknown>, policy: Parameters<typeof judgeKey>[1]) => {
  const { breaks, notJudged } = judgeKey(key(record), policy, now);
  return { breaks: breaks.map((b) => b.rule), notJudged: notJudged.map((n) => `${n.rule}:${n.missing}`) };
};

describe('keys audit rules (docs/contract.md §C8)', () => {
  it('--max-age: the exact edge breaks it, a millisecond younger passes', () => {
    expect(rules({ createdAt: now - 90 * DAY }, { maxAgeMs: 90 * DAY }).breaks).toEqual(['max-age']);
    expect(rules({ createdAt: now - 90 * DAY + 1 }, { maxAgeMs: 90 * DAY }).breaks).toEqual([]);
  });

  it('--require-expiry: null is "never", an absent field is not judged', () => {
    expect(rules({ expiresAt: null }, { requireExpiry: true }).breaks).toEqual(['require-expiry']);
    expect(rules({ expiresAt: undefined }, { requireExpiry: true }).notJudged).toEqual(['require-expiry:expiresAt']);
  });

  it('--expiring-within: the edge breaks it; a key that never expires passes it', () => {
    expect(rules({ expiresAt: now + 14 * DAY }, { expiringWithinMs: 14 * DAY }).breaks).toEqual(['expiring-within']);
    expect(rules({ expiresAt: now + 14 * DAY + 1 }, { expiringWithinMs: 14 * DAY }).breaks).toEqual([]);
    expect(rules({ expiresAt: null }, { expiringWithinMs: 14 * DAY })).toEqual({ breaks: [], notJudged: [] });
  });

  it('--unused-for: last use, else creation; lastUsedAt absent is "not reported", null with no creation time cannot be judged', () => {
    expect(rules({ lastUsedAt: now - 30 * DAY }, { unusedForMs: 30 * DAY }).breaks).toEqual(['unused-for']);
    expect(rules({ lastUsedAt: null, createdAt: now - 31 * DAY }, { unusedForMs: 30 * DAY }).breaks).toEqual(['unused-for']);
    expect(rules({ lastUsedAt: null }, { unusedForMs: 30 * DAY }).breaks).toEqual([]);
    expect(rules({ lastUsedAt: undefined, createdAt: now - 400 * DAY }, { unusedForMs: 30 * DAY }).notJudged).toEqual(['unused-for:lastUsedAt']);
    expect(rules({ lastUsedAt: null, createdAt: undefined }, { unusedForMs: 30 * DAY }).notJudged).toEqual(['unused-for:createdAt']);
  });

  it('every rule given is judged on its own', () => {
    expect(rules({ createdAt: undefined, expiresAt: null }, { maxAgeMs: DAY, requireExpiry: true, expiringWithinMs: DAY, unusedForMs: 2 * DAY })).toEqual({
      breaks: ['require-expiry'],
      notJudged: ['max-age:createdAt'],
    });
  });
});
