import { clip, shellWord } from '../text/text.js';
import { CliError, ExitCode, InterruptedError } from './errors.js';

const shown = (id: string) => clip(id, 200);

/**
 * A second signal while a key's change was out: svc stops at once, naming
 * the keys changed so far and the key whose change may or may not have
 * landed. `verb` is the change as a past participle ("revoked").
 */
export function stoppedMidChange(signal: NodeJS.Signals, verb: string, inHand: string | null, landed: readonly string[]): InterruptedError {
  return new InterruptedError(
    [
      `Stopped by ${signal}${inHand === null ? '' : ` while ${shown(inHand)} was being changed: it may or may not have been ${verb}; \`svc keys view ${shown(inHand)}\` tells`}.`,
      // Said here too, not only as each landed: under --json this is all stdout gets.
      landed.length === 0 ? `Nothing was ${verb} before that.` : `${verb[0]!.toUpperCase()}${verb.slice(1)} before that: ${landed.map(shown).join(', ')}.`,
      'The keys after it were not tried.',
    ],
    signal,
  );
}

/**
 * What a run stopped between two keys ends with, once what landed was told:
 * the keys not tried, whatever else is to be said of the arguments (a name
 * several keys share, an id no key has), and the signal's exit code.
 */
export function stoppedBetweenKeys(signal: NodeJS.Signals, notTried: readonly string[], also: readonly string[] = []): InterruptedError {
  return new InterruptedError([`Stopped by ${signal}${notTried.length === 0 ? '' : ` before these were tried: ${notTried.map(shown).join(', ')}`}.`, ...also], signal);
}

/**
 * A 401 to the retry of a revoke whose answer was lost: the key svc sends
 * stopped working in between, most likely because the revoke was of that
 * very key and took effect. svc cannot list keys to tell, so it says both
 * what it knows and what it cannot, rather than the generic 401.
 */
export function revokeLockedOut(id: string, keyHint: string | undefined): CliError {
  return new CliError(
    [
      `The revoke of ${clip(id, 80)} was sent, its answer was lost, and the retry was refused as unauthenticated (401): the key svc uses (${keyHint}) stopped working in between.`,
      `If ${clip(id, 80)} is that key, it is revoked. If not, log in with a working key and run \`svc keys revoke ${shellWord(id)} --if-exists\`.`,
    ],
    ExitCode.unauthenticated,
  );
}
