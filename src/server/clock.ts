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

/** The whole milliseconds isoTime formats itself: years 0000 to 9999, which toISOString writes with four digits. */
const FIRST_MS = new Date('0000-01-01T00:00:00.000Z').getTime();
const LAST_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const DAY_MS = 86_400_000;

/**
 * ISO 8601 UTC with milliseconds, the only timestamp shape the API emits:
 * what Date#toISOString writes. Every key record carries two or three, and
 * V8 formats toISOString through a printf-style formatter that cost more
 * instructions than the rest of the record (callgrind), so the common range
 * is done with integer arithmetic; anything else is left to toISOString.
 */
export function isoTime(ms: number): string {
  if (!Number.isInteger(ms) || ms < FIRST_MS || ms > LAST_MS) return new Date(ms).toISOString();
  const days = Math.floor(ms / DAY_MS);
  const inDay = ms - days * DAY_MS;
  const [year, month, day] = civilFromDays(days);
  const hours = Math.floor(inDay / 3_600_000);
  const minutes = Math.floor(inDay / 60_000) % 60;
  const seconds = Math.floor(inDay / 1000) % 60;
  const millis = inDay % 1000;
  const yyyy = year < 10 ? `000${year}` : year < 100 ? `00${year}` : year < 1000 ? `0${year}` : `${year}`;
  return `${yyyy}-${two(month)}-${two(day)}T${two(hours)}:${two(minutes)}:${two(seconds)}.${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
}

function two(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}

/** Year, month (1-12) and day of the proleptic Gregorian calendar, `days` after 1970-01-01 (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms"). */
function civilFromDays(days: number): [number, number, number] {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1_460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1;
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
  return [yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day];
}
