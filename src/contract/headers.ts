export const RATE_LIMIT_HEADERS = {
  limit: 'ratelimit-limit',
  remaining: 'ratelimit-remaining',
  reset: 'ratelimit-reset',
  policy: 'ratelimit-policy',
} as const;
