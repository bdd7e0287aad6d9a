/**
 * A new key handed to where it is used (--to-file, --to-command) instead of
 * printed. Whatever goes wrong, the plan's `onFailure` decides
 * (docs/contract.md §C9): `print` shows the secret as without delivery,
 * before the failure is reported, so that a person at the terminal can
 * still store it; `revoke`, the default where nobody watches, keeps it out
 * of the output (a log) and revokes the key, whose secret is then nowhere.
 */
import { answerThroughInterrupt } from '../terminal/answer-through-interrupt.js';
import { readEnv } from '../terminal/environment.js';
import { SecretNotWrittenError } from '../errors/errors.js';
import type { NewKey } from '../operations/create.js';
import type { KeySession } from '../session/session.js';
import { newKeyDocument } from '../views/documents.js';
import { describeNewKey, shown } from '../views/keys.js';
import { showNewKey } from '../views/show-new-key.js';
import { deliver } from './deliver.js';
import { DeliveryFailedError, describeDelivered, type Delivered, type Fallback } from '../errors/delivery-failed.js';
import type { DeliveryPlan } from './plan.js';

/**
 * Delivers the new key's secret and says so on stderr; never prints the
 * secret unless delivery fails and the plan says to. A key without a
 * secret svc can find, or one whose create Ctrl-C interrupted, is shown as
 * ever (which stops the command). `printDocument` as for showNewKey, on
 * failure; with --json a revoked key's document is printed without its secret.
 */
export async function handOverNewKey(session: KeySession, key: NewKey, plan: DeliveryPlan, printDocument = true): Promise<Delivered[]> {
  const { secret } = key;
  if (secret === null || key.interrupted) {
    // Throws: SecretNotFoundError, or the InterruptedError that ends the command once the key is shown.
    await showOrRevokeNewKey(session, key, printDocument);
    return [];
  }
  session.render.handingOn(secret);
  let delivered: Delivered[];
  try {
    // What the command prints goes where svc's stderr goes: where nobody watches (a log), with the secret masked.
    const watched = session.io.stderrIsTTY && !readEnv(session.io.env, 'CI');
    delivered = await deliver(plan, secret, { env: session.io.env, output: session.io.stderr, onSignal: session.deps.onSignal, mask: !watched });
  } catch (error) {
    if (plan.onFailure === 'revoke' && error instanceof DeliveryFailedError) {
      const { fallback, signal } = await revokeUnseen(session, key);
      // The record is the one the create answered; what became of the key since is said beside it.
      if (session.options.json && printDocument) session.render.json(newKeyDocument(key, { delivered: error.delivered, revoked: 'revoked' in fallback }));
      throw error.instead(fallback, signal);
    }
    try {
      await showOrRevokeNewKey(session, key, printDocument);
    } catch (shown) {
      // Printing was the fallback: both ways out failed, and that is what the person must hear.
      if (shown instanceof SecretNotWrittenError && error instanceof DeliveryFailedError) {
        throw new SecretNotWrittenError(key.view.id, shown.writeError, [`The new secret could not be delivered: ${error.reason}.`], shown.revoked, shown.signal);
      }
      throw shown;
    }
    throw error;
  }
  session.render.success(`Created ${describeNewKey(key)}.`, `Its secret went to ${describeDelivered(delivered)}, and was not printed; svc keeps no copy.`);
  return delivered;
}

/**
 * Shows a new key (showNewKey). A secret that stdout did not take (a full
 * disk, a reader gone, /dev/null) is lost: its key, which nobody can use and
 * whose secret may lie half-written in a file, is revoked before the
 * failure is told (docs/contract.md §C9).
 */
export async function showOrRevokeNewKey(session: KeySession, key: NewKey, printDocument = true): Promise<void> {
  // A reader that goes away would otherwise end svc at once (exit 141), with the key live. Once it has, the
  // subscription stays: svc stays to revoke the key and tell so, and exits 1 for it, not 141 at the last flush.
  const off = session.io.onReaderGone?.(() => {});
  if (key.secret !== null) session.render.handingOn(key.secret);
  try {
    await showNewKey(session, key, printDocument);
  } catch (error) {
    if (!(error instanceof SecretNotWrittenError) || error.revoked !== undefined) {
      off?.();
      throw error;
    }
    const { fallback, signal } = await revokeUnseen(session, key);
    throw error.tried('revoked' in fallback ? true : { why: fallback.why }, signal);
  }
  off?.();
}

/**
 * Revokes the new key whose secret went nowhere; a revoke that fails is
 * said, not thrown: the delivery's failure comes first. A Ctrl-C, SIGTERM
 * or SIGHUP meanwhile (a cancelled job) is waited through, since a key
 * nobody has the secret of would otherwise stay live, unsaid; a second
 * stops at once, and the key is named for the person to revoke. `signal`:
 * the first that came, whose code the command then exits with.
 */
async function revokeUnseen(
  session: KeySession,
  key: NewKey,
): Promise<{ fallback: Exclude<Fallback, { printed: true }>; signal: NodeJS.Signals | null }> {
  const id = key.view.id;
  if (id === null) return { fallback: { notRevoked: null, why: "the server's answer gives no id for it" }, signal: null };
  let signal: NodeJS.Signals | null = null;
  try {
    await answerThroughInterrupt(
      session.deps.onSignal,
      (received) => {
        signal = received;
        session.render.warn(`Revoking the new key ${shown(id)} before stopping: nobody has its secret (${received} again to stop at once).`);
      },
      (received) => new StoppedBeforeRevoke(received),
      () => session.client.revokeKey(id, { finish: true }),
    );
    return { fallback: { revoked: id }, signal };
  } catch (error) {
    return { fallback: { notRevoked: id, why: (error as Error).message }, signal };
  }
}

class StoppedBeforeRevoke extends Error {
  constructor(signal: NodeJS.Signals) {
    super(`stopped by ${signal} before its revoke was done`);
    this.name = 'StoppedBeforeRevoke';
  }
}
