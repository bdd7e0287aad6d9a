import type { ApiResponse } from './api.js';
import { header } from './headers.js';
import { RATE_LIMIT_HEADERS } from '../contract/headers.js';

export interface RateLimitReading {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

/** The RateLimit-* headers of a response, or null when the server sent none. */
export function readRateLimit(res: Pick<ApiResponse<unknown>, 'headers'>): RateLimitReading | null {
  const limit = Number(header(res, RATE_LIMIT_HEADERS.limit));
  const remaining = Number(header(res, RATE_LIMIT_HEADERS.remaining));
  const resetSeconds = Number(header(res, RATE_LIMIT_HEADERS.reset));
  if (![limit, remaining, resetSeconds].every(Number.isFinite) || header(res, RATE_LIMIT_HEADERS.limit) === null) {
    return null;
  }
  return { limit, remaining, resetSeconds };
}

/** `limit` null: a 429 that gave only its reset. */
export function describeRateLimit(r: (Omit<RateLimitReading, 'limit'> & { limit: number | null }) | null): string {
  if (!r) return 'rate limit not reported';
  return `${r.remaining}${r.limit === null ? '' : ` of ${r.limit}`} requests left this minute (resets in ${r.resetSeconds} s)`;
}
