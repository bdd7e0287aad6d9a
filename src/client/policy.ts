/**
 * The retry rules of docs/contract.md §C4 as pure functions: no timers, no I/O, so
 * every branch is tested directly.
 */

export interface RetryPolicy {
  /** Sleep through 429 RATE_LIMITED; false fails at once (`--no-wait`). */
  waitOnRateLimit: boolean;
  /** Longest total time spent sleeping for rate limits, jitter included, in seconds. */
  maxWaitSeconds: number;
  /** Retries after a network error or 5xx. */
  maxRetries: number;
  baseDelayMs: number;
  capDelayMs: number;
}

export const DEFAULT_POLICY: RetryPolicy = {
  waitOnRateLimit: true,
  maxWaitSeconds: 300,
  maxRetries: 4,
  baseDelayMs: 500,
  capDelayMs: 30_000,
};

/** What one attempt produced, as far as the policy cares. */
export type Attempt =
  | { kind: 'response'; status: number; code?: string | null; retryAfter?: string | null; rateLimitReset?: string | null }
  | { kind: 'network'; reachedServerMaybe: boolean; final?: boolean };

export interface RetryState {
  method: string;
  /** Network/5xx retries made so far. */
  retries: number;
  /** Milliseconds already slept for rate limits, jitter included. */
  waitedMs: number;
}

export type Step =
  | { action: 'accept' }
  /** `jitterMs` (0–1,000) comes on top, so clients sharing a workspace do not all wake at the window's edge. */
  | { action: 'wait-rate-limit'; seconds: number; jitterMs: number }
  | { action: 'backoff'; delayMs: number }
  | { action: 'give-up'; reason: 'no-wait' | 'wait-budget' | 'retries-exhausted' | 'not-idempotent' | 'final' };

/** min(cap, base·2ⁿ) times a factor in [0.8, 1.2]. */
export function backoffDelayMs(retry: number, policy: RetryPolicy, random: () => number): number {
  const exponential = Math.min(policy.capDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.round(exponential * (0.8 + 0.4 * random()));
}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date read against `nowMs`, the answer's Date); null when missing or unparsable. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | null {
  if (value == null) return null;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.max(1, Math.ceil(Number(text)));
  const date = Date.parse(text);
  if (/[a-z]/i.test(text) && Number.isFinite(date)) {
    return Math.max(1, Math.ceil((date - nowMs) / 1000));
  }
  return null;
}

/**
 * How long a 429 asks to wait (docs/contract.md §C4): Retry-After, else the same
 * answer's RateLimit-Reset, else 1 s as the spec recommends.
 */
export function rateLimitSeconds(retryAfter: string | null | undefined, rateLimitReset: string | null | undefined, nowMs: number): number {
  const reset = rateLimitReset?.trim() ?? '';
  return parseRetryAfter(retryAfter, nowMs) ?? (/^\d+$/.test(reset) ? Math.max(1, Number(reset)) : 1);
}

/**
 * A 429 is a rate limit when its code says so or says nothing: the spec
 * makes the error body's `code` optional. A 429 with another code is some
 * other refusal, and an ordinary error.
 */
function isRateLimit(status: number, code: string | null | undefined): boolean {
  return status === 429 && (code === undefined || code === null || code === 'RATE_LIMITED');
}

export function nextStep(
  attempt: Attempt,
  state: RetryState,
  policy: RetryPolicy,
  env: { nowMs: number; random: () => number },
): Step {
  if (attempt.kind === 'response') {
    if (isRateLimit(attempt.status, attempt.code)) {
      if (!policy.waitOnRateLimit) return { action: 'give-up', reason: 'no-wait' };
      const seconds = rateLimitSeconds(attempt.retryAfter, attempt.rateLimitReset, env.nowMs);
      const jitterMs = Math.floor(env.random() * 1000);
      if (state.waitedMs + seconds * 1000 + jitterMs > policy.maxWaitSeconds * 1000) {
        return { action: 'give-up', reason: 'wait-budget' };
      }
      return { action: 'wait-rate-limit', seconds, jitterMs };
    }
    if (attempt.status < 500) return { action: 'accept' };
  }
  if (attempt.kind === 'network' && attempt.final) return { action: 'give-up', reason: 'final' };
  const reached = attempt.kind === 'response' || attempt.reachedServerMaybe;
  // A created key whose response was lost is still live; retrying would make
  // a second one whose secret nobody saw.
  if (state.method === 'POST' && reached) return { action: 'give-up', reason: 'not-idempotent' };
  if (state.retries >= policy.maxRetries) return { action: 'give-up', reason: 'retries-exhausted' };
  const backoffMs = backoffDelayMs(state.retries, policy, env.random);
  // A 503 (or any 5xx) that says when to come back is not asked again sooner.
  const askedSeconds = attempt.kind === 'response' ? parseRetryAfter(attempt.retryAfter, env.nowMs) : null;
  return { action: 'backoff', delayMs: askedSeconds === null ? backoffMs : Math.max(backoffMs, askedSeconds * 1000) };
}
