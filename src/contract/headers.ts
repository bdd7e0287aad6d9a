export const RATE_LIMIT_HEADERS = {
  limit: 'ratelimit-limit',
  remaining: 'ratelimit-remaining',
  reset: 'ratelimit-reset',
  policy: 'ratelimit-policy',
} as const;

/**
 * The reference server's extension (docs/contract.md §B; the real service
 * sends no such header): which run of the server answered. `mem-…` is
 * random for each start of a server whose keys live in memory, so a new
 * value means its keys are gone; `data-…` is the same for every start on
 * one --data file.
 */
export const SERVER_INSTANCE_HEADER = 'svc-server-instance';
export const IN_MEMORY_INSTANCE = 'mem-';
export const PERSISTED_INSTANCE = 'data-';
