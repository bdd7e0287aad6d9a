import { confirmChange } from './confirm.js';
import { keyState, mayStillWork, stillDoes } from '../domain/key-state.js';
import { warnInUse } from './key-changes.js';
import { handOverNewKey, showOrRevokeNewKey } from '../delivery/hand-over.js';
import { DeliveryFailedError, type Delivered } from '../errors/delivery-failed.js';
import type { DeliveryPlan } from '../delivery/plan.js';
import type { KeyResult } from '../operations/change-keys.js';
import type { NewKey } from '../operations/create.js';
import { profileKeysContext } from '../operations/context.js';
import { endOverlap, rotateKey, type RotateOptions, type Rotation } from '../operations/rotate.js';
import type { KeySession } from '../session/session.js';
import { keyChangeDocument, newKeyDocument } from '../views/documents.js';
import { keyLabel, shown } from '../views/keys.js';
import { rotationMessages, unsavedFailure } from '../views/rotation.js';
import { createWatch } from '../views/show-new-key.js';

/**
 * Rotates `id`, showing the new key as soon as it exists (or, given a
 * `plan`, delivering it) and saying what became of the old one. Under
 * --json, whatever fails after the create, the new key's document is
 * printed before the failure: with its secret, unless that was delivered.
 * Shared by `keys rotate` and the interactive manager.
 */
export async function rotate(
  session: KeySession,
  id: string,
  opts: RotateOptions & { yes?: boolean },
  plan: DeliveryPlan | null = null,
): Promise<{ rotation: Rotation; delivered: readonly Delivered[] | null }> {
  let created: NewKey | undefined;
  let delivered: Delivered[] | null = null;
  // Set when a failed delivery kept the secret out of the output (--on-delivery-failure revoke), so it stays out:
  // whether its key was then revoked.
  let withheld = null as { revoked: boolean } | null;
  try {
    const rotation = await rotateKey(profileKeysContext(session), id, opts, {
      watch: createWatch(session),
      // A rotation asks first, as a revoke does. Where nobody can be asked, `keys rotate` went on only with --yes or --overlap.
      async proceed(old) {
        if (opts.yes || !session.canPrompt) return;
        if (old.id !== null) warnInUse(session, [old.id], [old], null, 'rotating');
        const state = keyState(old, session.client.serverNow());
        const kept = mayStillWork(state) ? 'the old one keeps working until --finish' : `the old one, which ${stillDoes(state)}, is kept until --finish`;
        const retire = opts.overlap ? kept : opts.disableOld ? 'the old one is disabled' : 'the old one is revoked; this cannot be undone';
        const label = old.id === null ? shown(id) : keyLabel({ ...old, id: old.id });
        await confirmChange(session, `Rotate ${label}? A new key replaces it and ${retire}.`, 'nothing was changed');
      },
      async show(key) {
        created = key;
        await showOrRevokeNewKey(session, key, false);
      },
      ...(plan === null
        ? {}
        : {
            async deliver(key: NewKey) {
              created = key;
              try {
                delivered = await handOverNewKey(session, key, plan, false);
              } catch (error) {
                if (error instanceof DeliveryFailedError && !('printed' in error.fallback)) withheld = { revoked: 'revoked' in error.fallback };
                throw error;
              }
            },
          }),
      async confirmSave(profiles) {
        if (!session.canPrompt) return false;
        const which = profiles.length === 1 ? `profile '${profiles[0]}' uses` : `profiles ${profiles.map((name) => `'${name}'`).join(', ')} use`;
        return (await session.prompts()).confirm(`This is the key ${which}. Save the new key there?`, true);
      },
    });
    for (const [kind, line] of rotationMessages(session, rotation.oldId, rotation)) session.render[kind](line);
    if (rotation.retired === 'kept-unsaved') throw unsavedFailure(rotation, opts.overlap === true);
    return { rotation, delivered };
  } catch (error) {
    if (session.options.json && created) {
      session.render.json(newKeyDocument(created, withheld === null ? { delivered } : { delivered: [], revoked: withheld.revoked }, { previous: null }));
    }
    throw error;
  }
}

/** The manager's Finish asks first; `keys rotate --finish` is the decision itself. */
export async function confirmFinish(session: KeySession, pending: { oldId: string; newId: string }): Promise<void> {
  await confirmChange(session, `Revoke the old key ${shown(pending.oldId)}? Everything should use ${shown(pending.newId)} by now.`, 'nothing was revoked');
}

/** `keys rotate --finish` or `--cancel`, and the manager's Finish. */
export async function finishRotation(session: KeySession, how: 'finish' | 'cancel'): Promise<void> {
  const { pending, id, answer, wasGone } = await endOverlap(profileKeysContext(session), how);
  if (wasGone) session.render.info(`${shown(id)} was already gone.`);
  session.render.success(
    how === 'finish'
      ? `Revoked the old key ${shown(id)}; the rotation to ${shown(pending.newId)} is complete.`
      : `Revoked the new key ${shown(id)}; ${shown(pending.oldId)} stays the key.`,
  );
  if (session.options.json) {
    const result: KeyResult = wasGone ? { state: 'gone', arg: id, id } : { state: 'done', arg: id, id, name: null, changed: { kind: 'revoked', answer } };
    session.render.json(keyChangeDocument('revoke', [result], { goneIsDone: true, incomplete: null }));
  }
}
