// tier: in-process
import { describe, expect, it } from 'vitest';
import { FixedWindowLimiter } from '../../src/server/limiter.js';

/** A limiter on a hand-driven clock, starting at an exact window boundary. */
function limiterAt(startMs: number) {
  let now = startMs;
  const limiter = new FixedWindowLimiter(() => now);
  return {
    limiter,
    set: (ms: number) => {
      now = ms;
    },
  };
}

const W = 60_000;
const BOUNDARY = 28_000_000 * W;

describe('FixedWindowLimiter', () => {
  it('admits exactly the limit in one window, then refuses with the time left', () => {
    const { limiter, set } = limiterAt(BOUNDARY);
    for (let i = 1; i <= 30; i++) {
      expect(limiter.check('ws', 30)).toEqual({ allowed: true, limit: 30, remaining: 30 - i, resetSeconds: 60 });
    }
    set(BOUNDARY + 12_300);
    expect(limiter.check('ws', 30)).toEqual({ allowed: false, limit: 30, remaining: 0, resetSeconds: 48 });
  });

  it('aligns windows to the epoch: the last millisecond is still the old window, the boundary is a new one', () => {
    const { limiter, set } = limiterAt(BOUNDARY + 59_999);
    expect(limiter.check('ws', 1)).toMatchObject({ allowed: true, resetSeconds: 1 });
    expect(limiter.check('ws', 1)).toMatchObject({ allowed: false, resetSeconds: 1 });
    set(BOUNDARY + W);
    expect(limiter.check('ws', 1)).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 60 });
  });

  it('rounds the reset up and never reports less than 1 second', () => {
    const { limiter, set } = limiterAt(BOUNDARY + 1);
    expect(limiter.check('ws', 5).resetSeconds).toBe(60);
    set(BOUNDARY + 59_001);
    expect(limiter.check('ws', 5).resetSeconds).toBe(1);
    set(BOUNDARY + 58_999);
    expect(limiter.check('ws', 5).resetSeconds).toBe(2);
  });

  it('counts per workspace, never across workspaces', () => {
    const { limiter } = limiterAt(BOUNDARY);
    expect(limiter.check('a', 1).allowed).toBe(true);
    expect(limiter.check('a', 1).allowed).toBe(false);
    expect(limiter.check('b', 1).allowed).toBe(true);
  });

  it('applies a raised limit to the current window at once', () => {
    const { limiter } = limiterAt(BOUNDARY);
    for (let i = 0; i < 30; i++) limiter.check('ws', 30);
    expect(limiter.check('ws', 30).allowed).toBe(false);
    expect(limiter.check('ws', 120)).toEqual({ allowed: true, limit: 120, remaining: 89, resetSeconds: 60 });
  });

  it('applies a lowered limit to the current window at once: refused until the window ends', () => {
    const { limiter, set } = limiterAt(BOUNDARY);
    for (let i = 0; i < 50; i++) expect(limiter.check('ws', 120).allowed).toBe(true);
    expect(limiter.check('ws', 30)).toEqual({ allowed: false, limit: 30, remaining: 0, resetSeconds: 60 });
    set(BOUNDARY + W);
    expect(limiter.check('ws', 30)).toMatchObject({ allowed: true, remaining: 29 });
  });

  it('admits exactly the limit when many checks race', async () => {
    const { limiter } = limiterAt(BOUNDARY);
    const decisions = await Promise.all(Array.from({ length: 500 }, () => Promise.resolve().then(() => limiter.check('ws', 300))));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(300);
  });

  it('keeps one counter per workspace however many windows pass (old windows are dropped)', () => {
    const { limiter, set } = limiterAt(BOUNDARY);
    for (let window = 0; window < 1000; window++) {
      set(BOUNDARY + window * W);
      expect(limiter.check('ws', 1).allowed).toBe(true);
      expect(limiter.check('ws', 1).allowed).toBe(false);
    }
    expect(limiter.size).toBe(1);
  });
});
