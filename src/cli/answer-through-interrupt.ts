import type { Deps } from './deps.js';

/**
 * `send`, with Ctrl-C (and SIGTERM) taken over while it is out, for a request
 * whose answer may hold the only copy of a secret: the first is told to
 * `first` and waited through, so the answer still arrives; the second ends
 * the wait at once, rejecting with `second()`'s error, which says what may
 * have been done without it. Each is told the signal, whose number the exit code carries.
 */
export async function answerThroughInterrupt<T>(
  onSignal: Deps['onSignal'],
  first: (signal: NodeJS.Signals) => void,
  second: (signal: NodeJS.Signals) => Error,
  send: () => Promise<T>,
): Promise<T> {
  let signals = 0;
  let stopNow!: (error: Error) => void;
  const stopped = new Promise<never>((_, reject) => (stopNow = reject));
  const off = onSignal(['SIGINT', 'SIGTERM'], (signal) => {
    if (++signals === 1) first(signal);
    else stopNow(second(signal));
  });
  try {
    return await Promise.race([send(), stopped]);
  } finally {
    off();
  }
}
