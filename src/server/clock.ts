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

/**
 * The latest the clock may be moved to. What it stamps (createdAt,
 * lastUsedAt) is written as ISO 8601 with a four-digit year, in answers and
 * in the state file, so it must stay before year 10000, far short of the end
 * of Date's range (year 275760). Real time goes on adding to the offset, so
 * the limit is nearly a thousand years short: no server runs long enough to
 * carry its clock past 9999 from there.
 */
export const CLOCK_LIMIT_MS = Date.parse('9000-01-01T00:00:00.000Z');

/** ISO 8601 UTC with milliseconds, the only timestamp shape the API emits. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
