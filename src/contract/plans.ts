export const PLANS = ['free', 'starter', 'creator', 'pro'] as const;
export type Plan = (typeof PLANS)[number];

/** Requests per minute per workspace, from the spec's limits table. */
export const REQUESTS_PER_MINUTE: Readonly<Record<Plan, number>> = {
  free: 30,
  starter: 120,
  creator: 300,
  pro: 1000,
};

export const RATE_WINDOW_SECONDS = 60;

export function isPlan(value: unknown): value is Plan {
  return typeof value === 'string' && (PLANS as readonly string[]).includes(value);
}
