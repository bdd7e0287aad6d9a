import type { KeyRunWatch } from './operations/keys.js';
import type { Deps } from './deps.js';
import { InterruptedError } from './errors.js';
import type { Renderer } from './render/renderer.js';
import { shown } from './views/keys.js';

/**
 * A change to several keys under Ctrl-C, SIGTERM or SIGHUP (a cancelled CI
 * job): the first signal lets the key in hand finish and stops before the
 * next, so that every change that landed is told and none is left
 * unknown; a second stops at once, naming the key whose change may or may
 * not have landed. `run` gets the watch to hand to the operation; `verb`
 * is the change as a past participle ("revoked").
 */
export async function stoppableBetweenKeys<T, R>(
  { onSignal }: Pick<Deps, 'onSignal'>,
  render: Renderer,
  verb: string,
  run: (watch: Required<Pick<KeyRunWatch<T>, 'stopRequested' | 'onStart'>>) => Promise<R>,
): Promise<R> {
  let requested: NodeJS.Signals | null = null;
  let inHand: string | null = null;
  let stopNow!: (error: Error) => void;
  const stopped = new Promise<never>((_, reject) => (stopNow = reject));
  const off = onSignal(['SIGINT', 'SIGTERM', 'SIGHUP'], (signal) => {
    if (requested === null) {
      requested = signal;
      if (inHand !== null) render.info(`Stopping once ${shown(inHand)} is done (${signal} again to stop at once).`);
      return;
    }
    stopNow(
      new InterruptedError(
        [
          `Stopped by ${signal}${inHand === null ? '' : ` while ${shown(inHand)} was being changed: it may or may not have been ${verb}; \`svc keys view ${shown(inHand)}\` tells`}.`,
          'The keys after it were not tried.',
        ],
        signal,
      ),
    );
  });
  try {
    return await Promise.race([
      run({
        stopRequested: () => requested,
        onStart: (id) => (inHand = id),
      }),
      stopped,
    ]);
  } finally {
    off();
  }
}

/** What a run stopped between two keys ends with, once what landed was told: the keys not tried, and the signal's exit code. */
export function stoppedBetweenKeys(signal: NodeJS.Signals, notTried: readonly string[]): InterruptedError {
  return new InterruptedError([`Stopped by ${signal}${notTried.length === 0 ? '' : ` before these were tried: ${notTried.map(shown).join(', ')}`}.`], signal);
}
