// tier: in-process
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/cli/domain/duration.js';
import { UsageError } from '../../src/cli/errors/errors.js';
import { relativeTime } from '../../src/cli/views/time.js';

describe('parseDuration', () => {
  it('reads each unit', () => {
    expect(parseDuration('45s')).toBe(45_000);
    expect(parseDuration('90m')).toBe(5_400_000);
    expect(parseDuration('12h')).toBe(43_200_000);
    expect(parseDuration('30d')).toBe(2_592_000_000);
    expect(parseDuration('2W')).toBe(1_209_600_000);
  });

  it('rejects anything else as a usage error', () => {
    for (const bad of ['', '30', 'd', '0d', '-1d', '1.5d', '30 days', '1y', '9999999999999999d']) {
      expect(() => parseDuration(bad), bad).toThrow(UsageError);
    }
  });
});

describe('relativeTime', () => {
  const now = Date.parse('2026-11-21T10:00:00.000Z');
  it('speaks of the past and the future', () => {
    expect(relativeTime('2026-11-21T09:57:00.000Z', now)).toBe('3 minutes ago');
    expect(relativeTime('2026-12-21T10:00:00.000Z', now)).toBe('in 1 month');
    expect(relativeTime('2026-11-21T10:00:02.000Z', now)).toBe('just now');
    expect(relativeTime('2026-11-20T10:00:00.000Z', now)).toBe('1 day ago');
    expect(relativeTime('2027-02-19T09:59:00.000Z', now)).toBe('in 3 months');
    expect(relativeTime(now + 3_597_000, now)).toBe('in 1 hour');
    expect(relativeTime(now - 23.8 * 3_600_000, now)).toBe('1 day ago');
    expect(relativeTime(now + 45 * 60_000, now)).toBe('in 45 minutes');
  });
});
