/**
 * The server's notion of time: real time plus an offset that only grows.
 * Expiry, rate windows and timestamps all read it, so `POST /_local/clock`
 * can move them together and tests never have to sleep.
 */
export class Clock {
  private offsetMs = 0;
  private dateSecond = Number.NaN;
  private dateText = '';

  constructor(private readonly realNow: () => number = Date.now) {}

  /** Whole milliseconds, so timestamps survive a round trip through ISO strings unchanged. */
  now(): number {
    return Math.floor(this.realNow() + this.offsetMs);
  }

  advance(seconds: number): void {
    this.offsetMs += seconds * 1000;
  }

  /**
   * Now as an HTTP Date header: every answer carries the server's clock,
   * moved or not, so a client reads times against it. Made once a second.
   */
  httpDate(): string {
    const now = this.now();
    const second = Math.floor(now / 1000);
    if (second !== this.dateSecond) {
      this.dateSecond = second;
      this.dateText = new Date(now).toUTCString();
    }
    return this.dateText;
  }
}

/** Latest instant a JavaScript Date can represent (±8.64e15 ms around the epoch). */
export const MAX_TIME_MS = 8.64e15;

/** ISO 8601 UTC with milliseconds, the only timestamp shape the API emits. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
