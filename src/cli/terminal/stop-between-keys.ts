import type { RequestPhase } from '../../client/api.js';
import { answerThroughInterrupt } from './answer-through-interrupt.js';
import type { KeyOutcome, KeyRunWatch } from '../operations/keys.js';
import type { Deps } from './deps.js';
import { InterruptedError, StoppedBeforeRetryError } from '../errors/errors.js';
import type { Renderer } from './renderer.js';
import { shown } from '../views/keys.js';

/**
 * A change to several keys under Ctrl-C, SIGTERM or SIGHUP (a cancelled CI
 * job): the first signal lets the key in hand finish and stops before the
 * next, so that every change that landed is told and none is left
 * unknown; a second stops at once, naming the keys changed so far and the
 * key whose change may or may not have landed. While the key in hand
 * waits to be tried again after attempts that did nothing (a 429, a
 * connection that never reached the server), there is nothing to finish:
 * a signal then, or one that came while the attempt refused was out,
 * stops at once with that key not tried. `tell` says each key as it
 * lands; `run` gets the watch to hand to the operation; `verb` is the
 * change as a past participle ("revoked").
 */
export function stoppableBetweenKeys<T, R>(
  { onSignal }: Pick<Deps, 'onSignal'>,
  render: Renderer,
  verb: string,
  tell: (outcome: KeyOutcome<T>, name: string | null) => void,
  run: (watch: KeyRunWatch<T>) => Promise<R>,
): Promise<R> {
  let requested: NodeJS.Signals | null = null;
  let inHand: string | null = null;
  let phase: RequestPhase = { state: 'out' };
  const nothingToFinish = () => phase.state === 'waiting' && !phase.afterLostAnswer;
  const landed: string[] = [];
  const stopNow = (signal: NodeJS.Signals) =>
    new InterruptedError(
      [
        `Stopped by ${signal}${inHand === null ? '' : ` while ${shown(inHand)} was being changed: it may or may not have been ${verb}; \`svc keys view ${shown(inHand)}\` tells`}.`,
        // Said here too, not only as each landed: under --json this is all stdout gets.
        landed.length === 0 ? `Nothing was ${verb} before that.` : `${verb[0]!.toUpperCase()}${verb.slice(1)} before that: ${landed.map(shown).join(', ')}.`,
        'The keys after it were not tried.',
      ],
      signal,
    );
  return answerThroughInterrupt(
    onSignal,
    (signal) => {
      requested = signal;
      // The wait itself stops at once then (waitWithCountdown).
      if (inHand !== null && !nothingToFinish()) render.info(`Stopping once ${shown(inHand)} is done (${signal} again to stop at once).`);
    },
    stopNow,
    () =>
      run({
        stopRequested: () => requested,
        onStart: (id) => {
          inHand = id;
          phase = { state: 'out' };
        },
        onPhase: (next) => {
          phase = next;
          if (requested !== null && nothingToFinish()) throw new StoppedBeforeRetryError(requested);
        },
        onOutcome: (outcome, name) => {
          if (outcome.state === 'done') landed.push(outcome.id);
          tell(outcome, name);
        },
      }),
  );
}

/**
 * What a run stopped between two keys ends with, once what landed was told:
 * the keys not tried, whatever else is to be said of the arguments (a name
 * several keys share, an id no key has), and the signal's exit code.
 */
export function stoppedBetweenKeys(signal: NodeJS.Signals, notTried: readonly string[], also: readonly string[] = []): InterruptedError {
  return new InterruptedError(
    [`Stopped by ${signal}${notTried.length === 0 ? '' : ` before these were tried: ${notTried.map(shown).join(', ')}`}.`, ...also],
    signal,
  );
}

/** Arguments the server knew as no key's id, which a stop left unread as names. */
export function notLookedUp(args: readonly string[]): string[] {
  return args.length === 0 ? [] : [`No key has the id ${args.map(shown).join(', ')}; svc stopped before looking ${args.length === 1 ? 'it' : 'them'} up as a name.`];
}
