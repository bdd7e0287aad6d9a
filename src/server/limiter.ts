import { RATE_WINDOW_SECONDS } from '../contract/plans.js';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds left in the current window, rounded up, at least 1. */
  resetSeconds: number;
}

const WINDOW_MS = RATE_WINDOW_SECONDS * 1000;

/**
 * Fixed windows aligned to the epoch, one counter per workspace. Only the
 * current window of each workspace is kept: a counter from an older window
 * is replaced on the next request, so memory is one entry per workspace and
 * every check is O(1). The ceiling is passed in at check time, so a plan
 * change applies to the window already running.
 */
export class FixedWindowLimiter {
  private readonly counters = new Map<string, { window: number; count: number }>();

  constructor(private readonly now: () => number) {}

  check(workspaceId: string, limit: number): RateDecision {
    const now = this.now();
    const window = Math.floor(now / WINDOW_MS);
    let counter = this.counters.get(workspaceId);
    if (!counter || counter.window !== window) {
      counter = { window, count: 0 };
      this.counters.set(workspaceId, counter);
    }
    const allowed = counter.count < limit;
    if (allowed) counter.count += 1;
    const resetSeconds = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
    return { allowed, limit, remaining: Math.max(0, limit - counter.count), resetSeconds };
  }

  /** Forgets every window, as after a reset of the whole world. */
  clear(): void {
    this.counters.clear();
  }

  /** Number of workspaces with a counter, for tests that prove old windows go. */
  get size(): number {
    return this.counters.size;
  }
}
