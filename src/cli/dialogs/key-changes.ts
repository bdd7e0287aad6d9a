/**
 * The questions before a change to keys, each written once for the
 * commands and the manager alike: revoke, disable, and the warning about
 * the key svc is using that comes before them and before a rotation.
 */
import type { KeyList } from '../../client/api.js';
import { ApiError, NetworkError, RateLimitedError } from '../../client/errors.js';
import { describeFailure } from '../views/failure.js';
import type { KeyView } from '../../client/key-view.js';
import { UsageError } from '../errors/errors.js';
import { isKeyInUse, listedFor } from '../domain/keys.js';
import type { KeySession, Session } from '../session/session.js';
import { describeKey, keyLabel, shown } from '../views/keys.js';
import { confirmChange } from './confirm.js';

type Doing = 'revoking' | 'disabling' | 'rotating';

/**
 * Said before the question, so that the person knows what the yes means
 * before giving it: that one of `ids` is the key svc is using, or that svc
 * cannot tell from the hints this server shows. `keys` holds their
 * records: the list they were read from at `nowMs` on the server's clock,
 * or, without `nowMs`, the records alone.
 */
export function warnInUse(session: KeySession, ids: readonly string[], keys: readonly KeyView[], nowMs: number | null, doing: Doing): void {
  const { render, client } = session;
  const known = new Map(keys.filter((k) => k.id !== null).map((k) => [k.id!, k]));
  const listed = nowMs === null ? undefined : listedFor(keys, nowMs, client.keyHint);
  const inUse = ids.map((id) => (known.has(id) ? isKeyInUse(known.get(id)!, client.keyHint, listed) : false));
  const untold = ids.filter((_, i) => inUse[i] === null);
  if (inUse.includes(true)) {
    const which = `${ids.length === 1 ? 'This' : 'One of these'} is the key svc is using (${client.keyHint})`;
    // SVC_API_KEY wins over every profile: neither another profile nor a login would give svc another key.
    const until = session.credentials.source === 'env' ? 'until SVC_API_KEY holds another key' : 'until you switch profile or log in with another key';
    render.warn(
      doing === 'rotating'
        ? `${which}: after the new key is shown you will be asked to save it to the profile; without that the old key is kept.`
        : `${which}: ${doing} it locks the session out ${until}.`,
    );
  } else if (untold.length > 0) {
    render.warn(`svc cannot tell whether ${untold.map(shown).join(', ')} is the key it is using from the hints this server shows.`);
  }
}

/** How a key is named in a question: by its name and id where the list gave a name. */
function labelOf(id: string, keys: readonly KeyView[]): string {
  const key = keys.find((k) => k.id === id);
  return key ? keyLabel({ ...key, id }) : shown(id);
}

/**
 * Before revoking: the keys (unless a table already showed them), the
 * warning, and the question; declining in any way stops with "Cancelled;
 * nothing was revoked." (confirmChange).
 */
export async function confirmRevoke(session: KeySession, ids: readonly string[], keys: readonly KeyView[], nowMs: number, shownAbove = false): Promise<void> {
  if (!shownAbove) {
    const known = new Map(keys.filter((k) => k.id !== null).map((k) => [k.id!, k]));
    for (const id of ids) {
      const key = known.get(id);
      session.render.info(`  ${key ? describeKey(key, session.client.keyHint, nowMs) : `${shown(id)}  (not found)`}`);
    }
  }
  warnInUse(session, ids, keys, nowMs, 'revoking');
  await confirmChange(session, revokeQuestion(ids.length === 1 ? labelOf(ids[0]!, keys) : `these ${ids.length} keys`), 'nothing was revoked');
}

/** Before disabling keys (the manager, and `keys disable` of the key in use): the warning, then the question. */
export async function confirmDisable(session: KeySession, ids: readonly string[], keys: readonly KeyView[], nowMs: number): Promise<void> {
  warnInUse(session, ids, keys, nowMs, 'disabling');
  await confirmChange(session, `Disable ${ids.length === 1 ? labelOf(ids[0]!, keys) : `these ${ids.length} keys`}?`, 'nothing was changed');
}

/**
 * The key list for confirmDisableInUse, or undefined when it could not be
 * read (a server without the list, a rate limit, no answer): then svc
 * cannot tell which key it is using, says so, and the disable goes on, as
 * it did before svc asked (another key enables it again). A 401 or a stop
 * ends the command as anywhere.
 */
export async function listForDisable(session: KeySession): Promise<KeyList | undefined> {
  try {
    return await session.client.listAllKeys();
  } catch (error) {
    if (!(error instanceof NetworkError || error instanceof RateLimitedError || (error instanceof ApiError && error.status !== 401))) throw error;
    session.render.warn(`svc could not read the key list (${describeFailure(error, { verbose: false }).lines[0]!.replace(/\.$/, '')}), so it cannot tell whether a key it disables is the one it is using.`);
    return undefined;
  }
}

/**
 * Before `keys disable` without --yes: disabling the key svc is using locks
 * the session out, and enabling it again then takes another key, so that
 * one is asked about as the manager asks, on a terminal, and refused off
 * one. Other keys are disabled unasked: the session's own key enables them again.
 */
export async function confirmDisableInUse(session: KeySession, ids: readonly string[], list: KeyList): Promise<void> {
  const { client } = session;
  const listed = listedFor(list.keys, list.nowMs, client.keyHint);
  const inUse = list.keys.find((k) => k.id !== null && ids.includes(k.id) && isKeyInUse(k, client.keyHint, listed) === true);
  if (inUse === undefined) return;
  if (!session.canPrompt) {
    throw new UsageError(
      `Refusing to disable ${keyLabel({ ...inUse, id: inUse.id! })} without --yes: it is the key svc is using (${client.keyHint}), so disabling it locks this session out, and enabling it again takes another key.`,
    );
  }
  await confirmDisable(session, ids, list.keys, list.nowMs);
}

/**
 * Before `svc scan --revoke` ends the live keys it found: each key, whose
 * it is and with which key it will be revoked, then the question revoking
 * asks everywhere, in the same words.
 */
export async function confirmRevokeFound(session: Session, keys: readonly { id: string; name: string | null; workspaceId: string | null; by: 'profile' | 'itself' }[]): Promise<void> {
  for (const key of keys) {
    const where = key.workspaceId === null ? '' : ` in ${shown(key.workspaceId)}`;
    session.render.info(`  ${keyLabel(key)}${where}: ${key.by === 'profile' ? "revoked with the profile's key" : 'revoked with its own secret (not a key of the profile\'s workspace)'}`);
  }
  await confirmChange(session, revokeQuestion(keys.length === 1 ? keyLabel(keys[0]!) : `these ${keys.length} keys`), 'nothing was revoked');
}

function revokeQuestion(what: string): string {
  return `Revoke ${what}? This cannot be undone.`;
}
