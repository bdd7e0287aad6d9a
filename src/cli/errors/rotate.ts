/** How a rotation (`keys rotate`, its --finish and --cancel) fails, in the words that say what is left and what to run. */
import { clip, shellWord } from '../text/text.js';
import { CliError, ExitCode, InterruptedError, loginCommand, UsageError } from './errors.js';

const shown = (id: string) => clip(id, 200);
const quoted = (profiles: readonly string[]) => profiles.map((name) => `'${name}'`).join(', ');
const newKeyId = (newId: string | null) => (newId === null ? '' : ` ${shown(newId)}`);

/** --overlap while the profile has a rotation that --finish or --cancel has not ended. */
export function rotationPending(profileName: string, pending: { oldId: string; newId: string }): UsageError {
  return new UsageError(
    `Profile '${profileName}' already has a pending rotation (${shown(pending.oldId)} → ${shown(pending.newId)}): \`svc keys rotate --finish\` or \`--cancel\` it first.`,
  );
}

/** The new key could not be shown or handed over (`cause`): the old key was not touched. */
export function oldKeyLeft(cause: CliError, oldId: string): CliError {
  return new CliError([...cause.lines, `The old key ${shown(oldId)} was left as it was.`], cause.exitCode, undefined, cause.signal);
}

/**
 * The question whether to save the new key to the profiles that hold the
 * old one was withdrawn: nothing more was changed. `old` is what the old
 * key still does (domain/key-state.ts), and whether revoking it is advice.
 */
export function stoppedBeforeSave(
  newId: string | null,
  oldId: string,
  old: { stillDoes: string; worthRevoking: boolean },
  holders: readonly string[],
  signal: NodeJS.Signals | null,
): InterruptedError {
  return new InterruptedError(
    [
      `Stopped: the new key ${newId === null ? '' : `${shown(newId)} `}was created and shown above; the old key ${shown(oldId)} ${old.stillDoes}, and ${holders.length === 1 ? 'profile' : 'profiles'} ${quoted(holders)} still ${holders.length === 1 ? 'holds' : 'hold'} it.`,
      old.worthRevoking
        ? `Save the new key with \`${loginCommand(holders[0]!)}\`, then revoke the old one (svc keys revoke ${shellWord(oldId)}); or revoke the new one.`
        : `Save the new key with \`${loginCommand(holders[0]!)}\`; or revoke the new one.`,
    ],
    signal,
  );
}

/** A profile that held the old key changed meanwhile (another svc), so the new key was not saved there. */
export function holderChanged(profile: string): string {
  return `Profile '${profile}' no longer holds the key being rotated: another svc changed it meanwhile (a second rotation of the same key saves its own new key there, then revokes the old one), so this run's new key was not saved there.`;
}

/**
 * Saving the new key to the profiles stopped (`why`; `cause`, a failure
 * that carries a signal, ends the rotation with that signal's code): the
 * old key was left, and `saved` already hold the new one.
 */
export function stoppedSaving(oldId: string, saved: readonly string[], why: readonly string[], cause?: CliError): CliError {
  return new CliError(
    [
      ...why,
      `The new key above was created; this run left the old key ${shown(oldId)} as it was${saved.length > 0 ? `, and ${quoted(saved)} already ${saved.length === 1 ? 'holds' : 'hold'} the new one` : ''}.`,
      'Store the new secret, then revoke whichever key nothing uses.',
    ],
    cause?.signal ? cause.exitCode : ExitCode.failure,
    undefined,
    cause?.signal ?? null,
  );
}

/** --overlap, where the new key's id is not known: there is no pair to record. */
export function overlapUntracked(oldId: string): CliError {
  return new CliError(`The server's answer gives no id for the new key, so svc cannot track this rotation: revoke ${shown(oldId)} yourself once nothing uses it.`);
}

/** A signal while the old key was being revoked or disabled (`verb`): it may or may not be. */
export function stoppedWhileRetiring(oldId: string, newId: string | null, verb: 'revoke' | 'disable', signal: NodeJS.Signals): InterruptedError {
  return new InterruptedError(
    [
      `Stopped while the old key ${shown(oldId)} was being ${verb}d: it may or may not be; the new key${newKeyId(newId)} (shown above) works.`,
      `See with \`svc keys view ${shellWord(oldId)}\`, and ${verb} it with \`svc keys ${verb} ${shellWord(oldId)}\` if it is not.`,
    ],
    signal,
  );
}

/** The old key could not be revoked or disabled (`verb`), for `why`: the new key was made all the same. */
export function notRetired(oldId: string, newId: string | null, verb: 'revoke' | 'disable', why: string): CliError {
  return new CliError([
    `The new key${newKeyId(newId)} was created, but the old key ${shown(oldId)} could not be ${verb}d: ${clip(why, 200)}.`,
    `Retry with \`svc keys ${verb} ${shellWord(oldId)}\`.`,
  ]);
}

/** --finish or --cancel with no rotation pending. */
export function noRotationPending(profileName: string): UsageError {
  return new UsageError(`No rotation is pending in profile '${profileName}' (svc keys rotate <id> --overlap starts one).`);
}

/** --finish or --cancel would revoke the key the profile uses (`id`, the old or the new one). */
export function profileUsesKey(profileName: string, how: 'finish' | 'cancel', id: string): CliError {
  return new CliError([
    `Profile '${profileName}' uses the ${how === 'finish' ? 'old' : 'new'} key ${shown(id)}: revoking it would leave the profile with a key that no longer works. Nothing was changed.`,
    how === 'finish'
      ? `Save the new key there first (\`${loginCommand(profileName)}\`), then finish the rotation.`
      : `Log in with the old key first (\`${loginCommand(profileName)}\`), then cancel the rotation; or finish it instead.`,
  ]);
}
