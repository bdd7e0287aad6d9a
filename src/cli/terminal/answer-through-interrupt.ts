import type { RetryReason } from '../../client/api.js';
import type { Deps } from './deps.js';

/** Why a request waiting to be tried again has done nothing yet: its attempts were refused, or never reached the server. */
export function whyNothingYet(reason: RetryReason): string {
  return reason === 'rate-limit' ? 'the server refused it for the rate limit (429)' : 'it never reached the server';
}

/**
 * `send`, with Ctrl-C (and SIGTERM) taken over while it is out, for work
 * whose outcome must not go unsaid (an answer that may hold the only copy
 * of a secret, a revoke, the key in hand of a batch): the first is told to
 * `first` and waited through, so the outcome still arrives; the second ends
 * the wait at once, rejecting with `second()`'s error, which says what may
 * have been done without it. Where there is no answer to lose (between
 * attempts, none of which did anything), `first` returns the error to stop
 * with at once. Each is told the signal, whose number the exit code carries.
 */
export async function answerThroughInterrupt<T>(
  onSignal: Deps['onSignal'],
  first: (signal: NodeJS.Signals) => Error | void,
  second: (signal: NodeJS.Signals) => Error,
  send: () => Promise<T>,
): Promise<T> {
  let signals = 0;
  let stopNow!: (error: Error) => void;
  const stopped = new Promise<never>((_, reject) => (stopNow = reject));
  // SIGHUP too: a closed terminal or a cancelled job must not end svc before a secret it holds is seen or its key revoked.
  const off = onSignal(['SIGINT', 'SIGTERM', 'SIGHUP'], (signal) => {
    const now = ++signals === 1 ? first(signal) : second(signal);
    if (now) stopNow(now);
  });
  try {
    return await Promise.race([send(), stopped]);
  } finally {
    off();
  }
}
