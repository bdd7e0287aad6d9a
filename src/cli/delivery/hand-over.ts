/**
 * A new key handed to where it is used (--to-file, --to-command) instead of
 * printed. Whatever goes wrong, the secret is then printed as without
 * delivery, before the failure is reported: delivery never loses a secret.
 */
import { SecretNotWrittenError } from '../errors.js';
import type { NewKey } from '../operations/create.js';
import type { Session } from '../session.js';
import { describeNewKey } from '../views/keys.js';
import { showNewKey } from '../views/show-new-key.js';
import { deliver } from './deliver.js';
import { DeliveryFailedError, describeDelivered, type Delivered } from './failure.js';
import type { DeliveryPlan } from './plan.js';

/**
 * Delivers the new key's secret and says so on stderr; never prints the
 * secret unless delivery fails. A key without a secret svc can find, or
 * one whose create Ctrl-C interrupted, is shown as ever (which stops the
 * command). `printDocument` as for showNewKey, on failure.
 */
export async function handOverNewKey(session: Session, key: NewKey, plan: DeliveryPlan, printDocument = true): Promise<Delivered[]> {
  const { secret } = key;
  if (secret === null || key.interrupted) {
    // Throws: SecretNotFoundError, or the InterruptedError that ends the command once the key is shown.
    await showNewKey(session, key, printDocument);
    return [];
  }
  let delivered: Delivered[];
  try {
    delivered = await deliver(plan, secret, { env: session.io.env, output: session.io.stderr, onSignal: session.deps.onSignal });
  } catch (error) {
    try {
      await showNewKey(session, key, printDocument);
    } catch (shown) {
      // Printing was the fallback: both ways out failed, and that is what the person must hear.
      if (shown instanceof SecretNotWrittenError && error instanceof DeliveryFailedError) {
        throw new SecretNotWrittenError(key.view.id, shown.writeError, [`The new secret could not be delivered: ${error.reason}.`]);
      }
      throw shown;
    }
    throw error;
  }
  session.render.success(`Created ${describeNewKey(key)}.`, `Its secret went to ${describeDelivered(delivered)}, and was not printed; svc keeps no copy.`);
  return delivered;
}

/** The --json document of a delivered key: its record without the secret, and where the secret went. */
export function deliveredDocument(key: NewKey, delivered: readonly Delivered[]): { key: unknown; delivered: readonly Delivered[] } {
  return { key: withoutSecret(key.document, key.secret!), delivered };
}

/** `document` with every value equal to the secret left out, wherever the server put it. */
function withoutSecret(document: unknown, secret: string): unknown {
  if (Array.isArray(document)) return document.filter((item) => item !== secret).map((item) => withoutSecret(item, secret));
  if (typeof document !== 'object' || document === null) return document;
  return Object.fromEntries(Object.entries(document).flatMap(([name, value]) => (value === secret ? [] : [[name, withoutSecret(value, secret)]])));
}
