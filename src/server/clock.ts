/**
 * The server's notion of time: real time plus an offset that only grows.
 * Expiry, rate windows and timestamps all read it, so `POST /_local/clock`
 * can move them together and tests never have to sleep.
 */
export class Clock {
  private offsetMs = 0;

  constructor(private readonly realNow: () => number = Date.now) {}

  /** Whole milliseconds, so timestamps survive a round trip through ISO strings unchanged. */
  now(): number {
    return Math.floor(this.realNow() + this.offsetMs);
  }

  advance(seconds: number): void {
    this.offsetMs += seconds * 1000;
  }
}

/** Latest instant a JavaScript Date can represent (±8.64e15 ms around the epoch). */
export const MAX_TIME_MS = 8.64e15;

/** ISO 8601 UTC with milliseconds, the only timestamp shape the API emits. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
