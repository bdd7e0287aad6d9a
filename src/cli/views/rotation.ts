import type { Rotation } from '../operations/rotate.js';
import { CliError, loginCommand } from '../errors/errors.js';
import { shellWord } from '../text/text.js';
import type { KeySession } from '../session/session.js';
import { shown } from './keys.js';
import { keyState, mayStillWork, stillDoes, worthRevoking } from '../domain/key-state.js';

/** What a rotation says on stderr once the new key is shown, in order: each with the renderer method that says it. */
export function rotationMessages(session: KeySession, id: string, rotation: Rotation): ['success' | 'warn', string][] {
  const { profileName, credentials } = session;
  const out: ['success' | 'warn', string][] = [];
  const newId = rotation.created.view.id;
  if (rotation.expiryUnknown) out.push(['warn', `svc could not read when ${shown(id)} expires, so the new key does not expire.`]);
  if (rotation.workspaceMoved) {
    const { from, to } = rotation.workspaceMoved;
    out.push(['warn', `The new key anchors to workspace ${shown(to)} (your active one), not ${shown(from)}: its rate limit and plan follow ${shown(to)}.`]);
  }
  if (rotation.replacedKeyInUse && credentials.source === 'env') {
    out.push(['warn', 'You are rotating the key in SVC_API_KEY: put the new secret there before the next command.']);
  }
  if (rotation.retired !== 'kept-unsaved') {
    for (const name of rotation.holders) out.push(['success', `Saved the new key to profile '${name}'.`]);
  }
  if (rotation.replacedKeyInUse === null && credentials.source === 'profile' && rotation.retired !== 'kept-overlap') {
    out.push([
      'warn',
      `The server shows no key hint in svc's form, so svc cannot tell whether ${shown(id)} is the key profile '${profileName}' uses; if it is, run \`${loginCommand(profileName)}\` with the new one.`,
    ]);
  }
  const replacement = newId === null ? 'the new key' : shown(newId);
  switch (rotation.retired) {
    case 'revoked':
    case 'disabled':
      out.push(['success', `${rotation.retired === 'revoked' ? 'Revoked' : 'Disabled'} the old key ${shown(id)}; ${replacement} replaces it.`]);
      break;
    case 'gone':
      out.push(['warn', alreadyGone(id, replacement, rotation.old.name)]);
      break;
    case 'kept-overlap': {
      const state = keyState(rotation.old, rotation.created.nowMs);
      if (mayStillWork(state)) {
        out.push(['success', `${shown(id)} keeps working beside ${replacement}. Move every consumer to the new key, then run \`svc keys rotate --finish\`.`]);
      } else {
        out.push(['warn', `The old key ${shown(id)} ${stillDoes(state)}, so nothing uses it beside ${replacement}: move every consumer to the new key, then run \`svc keys rotate --finish\`.`]);
      }
      break;
    }
    case 'kept-unsaved':
      // Not said here: the rotation did not finish, and the failure says why (unsavedFailure).
      break;
  }
  return out;
}

/** A rotation that stopped before the old key: profiles still use it, and the new key was not saved there. */
export function unsavedFailure({ oldId: id, holders, old, created }: Rotation, overlap: boolean): CliError {
  const which = holders.length === 1 ? `Profile '${holders[0]}' still holds` : `Profiles ${holders.map((name) => `'${name}'`).join(', ')} still hold`;
  const state = keyState(old, created.nowMs);
  const left = overlap ? 'so no --overlap rotation was recorded' : 'so it was not revoked';
  const save = `Save the new key there with \`${loginCommand(holders[0]!)}\``;
  const then = !worthRevoking(state) ? '.' : overlap ? `, then revoke the old one once nothing uses it: svc keys revoke ${shellWord(id)}.` : `, then revoke the old one: svc keys revoke ${shellWord(id)}.`;
  return new CliError([
    `${which} the old key ${shown(id)}, ${left}: the new key above was not saved there. The old key ${stillDoes(state)}.`,
    `${save}${then}`,
  ]);
}

/**
 * The old key was gone when this run came to retire it: another run ended
 * it meanwhile (two rotations at once: the other revoked it first). This
 * run's new key is live and was shown, so it is kept; the other run may
 * have made one too, and only the person knows which is in use.
 */
function alreadyGone(id: string, replacement: string, name: string | null): string {
  const list = name === null ? 'svc keys list' : `svc keys list --name-exact ${shellWord(name)}`;
  return (
    `The old key ${shown(id)} was already revoked when this run came to retire it: another run (a second rotation of it, or a revoke) ended it meanwhile. ` +
    `${replacement} (shown above) replaces it; if another rotation made a key too, keep the one in use and revoke the other (\`${list}\` lists them).`
  );
}
