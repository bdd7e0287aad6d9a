// tier: in-process
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoTime } from '../../src/server/clock.js';

/** isoTime formats by itself what Date#toISOString would: it must never differ from it. */
describe('isoTime', () => {
  it('writes what toISOString writes, for any whole millisecond a Date can hold', () => {
    fc.assert(
      fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), (ms) => {
        expect(isoTime(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 20_000 },
    );
  });

  it.each([
    ['the first millisecond it formats itself', '0000-01-01T00:00:00.000Z'],
    ['the last', '9999-12-31T23:59:59.999Z'],
    ['the epoch', '1970-01-01T00:00:00.000Z'],
    ['a leap day', '2000-02-29T23:59:59.999Z'],
    ['the day after a century that is not a leap year', '1900-03-01T00:00:00.000Z'],
  ])('%s: %s', (_, iso) => {
    const ms = Date.parse(iso);
    for (const near of [ms - 1, ms, ms + 1]) expect(isoTime(near)).toBe(new Date(near).toISOString());
  });

  it('leaves what it does not format to toISOString: fractions, and the years written with six digits', () => {
    for (const ms of [1.5, -0.5, Date.parse('9999-12-31T23:59:59.999Z') + 1, Date.parse('0000-01-01T00:00:00.000Z') - 1]) {
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
  });
});
