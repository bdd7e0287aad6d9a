// tier: in-process
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_POLICY,
  backoffDelayMs,
  nextStep,
  parseRetryAfter,
  rateLimitSeconds,
  type Attempt,
  type RetryState,
} from '../../src/client/policy.js';

const env = { nowMs: Date.parse('2026-11-21T10:00:00Z'), random: () => 0.5 };
const fresh = (method = 'GET'): RetryState => ({ method, retries: 0, waitedMs: 0 });
const response = (status: number, extra: Partial<Extract<Attempt, { kind: 'response' }>> = {}): Attempt => ({
  kind: 'response',
  status,
  ...extra,
});

describe('backoffDelayMs', () => {
  it('doubles from 500 ms and caps at 30 s', () => {
    const mid = () => 0.5;
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelayMs(n, DEFAULT_POLICY, mid))).toEqual([
      500, 1000, 2000, 4000, 8000, 16000, 30000, 30000,
    ]);
  });

  it('stays within ±20% jitter', () => {
    expect(backoffDelayMs(2, DEFAULT_POLICY, () => 0)).toBe(1600);
    expect(backoffDelayMs(2, DEFAULT_POLICY, () => 0.999999)).toBe(2400);
    expect(backoffDelayMs(10, DEFAULT_POLICY, () => 0.999999)).toBe(36000);
  });
});

describe('parseRetryAfter', () => {
  it('reads delta-seconds, rounding fractions up', () => {
    expect(parseRetryAfter('7', env.nowMs)).toBe(7);
    expect(parseRetryAfter(' 2.1 ', env.nowMs)).toBe(3);
  });

  it('is at least 1 s, and null when missing or unparsable', () => {
    expect(parseRetryAfter('0', env.nowMs)).toBe(1);
    expect(parseRetryAfter(undefined, env.nowMs)).toBeNull();
    expect(parseRetryAfter(null, env.nowMs)).toBeNull();
    expect(parseRetryAfter('soon', env.nowMs)).toBeNull();
    expect(parseRetryAfter('-5', env.nowMs)).toBeNull();
  });

  it('rateLimitSeconds falls back to RateLimit-Reset, then to 1 s', () => {
    expect(rateLimitSeconds('7', '40', env.nowMs)).toBe(7);
    expect(rateLimitSeconds(null, '40', env.nowMs)).toBe(40);
    expect(rateLimitSeconds('soon', ' 40 ', env.nowMs)).toBe(40);
    expect(rateLimitSeconds(null, 'later', env.nowMs)).toBe(1);
    expect(rateLimitSeconds(undefined, undefined, env.nowMs)).toBe(1);
  });

  it('reads an HTTP date relative to now', () => {
    expect(parseRetryAfter('Sat, 21 Nov 2026 10:00:12 GMT', env.nowMs)).toBe(12);
    expect(parseRetryAfter('Sat, 21 Nov 2026 09:59:00 GMT', env.nowMs)).toBe(1);
  });
});

describe('nextStep', () => {
  it('accepts 2xx and ordinary 4xx without retrying, 401 included', () => {
    for (const status of [200, 201, 204, 400, 401, 404, 405, 413]) {
      expect(nextStep(response(status), fresh(), DEFAULT_POLICY, env)).toEqual({ action: 'accept' });
    }
  });

  it('waits Retry-After on 429 RATE_LIMITED, plus 0–1,000 ms drawn at random', () => {
    expect(nextStep(response(429, { code: 'RATE_LIMITED', retryAfter: '12' }), fresh(), DEFAULT_POLICY, env)).toEqual({
      action: 'wait-rate-limit',
      seconds: 12,
      jitterMs: 500,
    });
    const jitter = (r: number) => nextStep(response(429, { code: 'RATE_LIMITED', retryAfter: '1' }), fresh(), DEFAULT_POLICY, { ...env, random: () => r });
    expect(jitter(0)).toMatchObject({ jitterMs: 0 });
    expect(jitter(0.9999)).toMatchObject({ jitterMs: 999 });
  });

  it('waits RateLimit-Reset when the 429 has no Retry-After, else 1 s', () => {
    expect(nextStep(response(429, { code: 'RATE_LIMITED', rateLimitReset: '42' }), fresh(), DEFAULT_POLICY, env)).toMatchObject({
      action: 'wait-rate-limit',
      seconds: 42,
    });
    expect(nextStep(response(429, { code: 'RATE_LIMITED' }), fresh(), DEFAULT_POLICY, env)).toMatchObject({
      action: 'wait-rate-limit',
      seconds: 1,
    });
  });

  it('waits out a rate-limited POST too: the server refused it before doing anything', () => {
    expect(nextStep(response(429, { code: 'RATE_LIMITED', retryAfter: '3' }), fresh('POST'), DEFAULT_POLICY, env)).toMatchObject({
      action: 'wait-rate-limit',
      seconds: 3,
    });
  });

  it('treats a 429 without the RATE_LIMITED code as an ordinary answer', () => {
    expect(nextStep(response(429, { code: 'SOMETHING_ELSE', retryAfter: '3' }), fresh(), DEFAULT_POLICY, env)).toEqual({
      action: 'accept',
    });
  });

  it('gives up at once with --no-wait', () => {
    const policy = { ...DEFAULT_POLICY, waitOnRateLimit: false };
    expect(nextStep(response(429, { code: 'RATE_LIMITED', retryAfter: '3' }), fresh(), policy, env)).toEqual({
      action: 'give-up',
      reason: 'no-wait',
    });
  });

  it('gives up once the total wait, jitter included, would pass --max-wait', () => {
    const policy = { ...DEFAULT_POLICY, maxWaitSeconds: 60 };
    const attempt = response(429, { code: 'RATE_LIMITED', retryAfter: '30' });
    // The jitter here is 500 ms: 29.5 s waited, 30.5 s more, is 60 s.
    expect(nextStep(attempt, { ...fresh(), waitedMs: 29_500 }, policy, env).action).toBe('wait-rate-limit');
    expect(nextStep(attempt, { ...fresh(), waitedMs: 29_501 }, policy, env)).toEqual({
      action: 'give-up',
      reason: 'wait-budget',
    });
  });

  it('waits out a 429 without a code like a rate limit: the spec makes the code optional', () => {
    for (const code of [undefined, null]) {
      expect(nextStep(response(429, { code, retryAfter: '3' }), fresh(), DEFAULT_POLICY, env)).toEqual({ action: 'wait-rate-limit', seconds: 3, jitterMs: 500 });
    }
  });

  it('honours Retry-After on a 503, never retrying sooner than asked', () => {
    expect(nextStep(response(503, { retryAfter: '5' }), fresh(), DEFAULT_POLICY, env)).toEqual({ action: 'backoff', delayMs: 5_000 });
    expect(nextStep(response(503, { retryAfter: 'Sat, 21 Nov 2026 10:00:09 GMT' }), fresh(), DEFAULT_POLICY, env)).toEqual({ action: 'backoff', delayMs: 9_000 });
    // A shorter ask than the backoff's own delay changes nothing.
    expect(nextStep(response(503, { retryAfter: '1' }), { ...fresh(), retries: 3 }, DEFAULT_POLICY, env)).toEqual({ action: 'backoff', delayMs: 4_000 });
    expect(nextStep(response(503, { retryAfter: 'soon' }), fresh(), DEFAULT_POLICY, env)).toEqual({ action: 'backoff', delayMs: 500 });
  });

  it('backs off on 5xx and network errors for reads, with growing delays', () => {
    const attempts: Attempt[] = [response(500), response(503), { kind: 'network', reachedServerMaybe: true }];
    for (const attempt of attempts) {
      expect(nextStep(attempt, fresh(), DEFAULT_POLICY, env)).toEqual({ action: 'backoff', delayMs: 500 });
      expect(nextStep(attempt, { ...fresh(), retries: 3 }, DEFAULT_POLICY, env)).toEqual({ action: 'backoff', delayMs: 4000 });
    }
  });

  it('stops after four retries', () => {
    expect(nextStep(response(502), { ...fresh('DELETE'), retries: 4 }, DEFAULT_POLICY, env)).toEqual({
      action: 'give-up',
      reason: 'retries-exhausted',
    });
  });

  it('never retries a POST that may have reached the server', () => {
    for (const attempt of [response(500), { kind: 'network', reachedServerMaybe: true } as Attempt]) {
      expect(nextStep(attempt, fresh('POST'), DEFAULT_POLICY, env)).toEqual({ action: 'give-up', reason: 'not-idempotent' });
    }
  });

  it('retries a POST whose connection was refused', () => {
    expect(nextStep({ kind: 'network', reachedServerMaybe: false }, fresh('POST'), DEFAULT_POLICY, env)).toEqual({
      action: 'backoff',
      delayMs: 500,
    });
  });
});
