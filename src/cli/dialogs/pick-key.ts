import type { KeyList } from '../../client/api.js';
import { keyStatus, type KeyView } from '../../client/key-view.js';
import { PromptCancelledError, UsageError } from '../errors/errors.js';
import { checkKeyId, isAddressable, isKeyInUse } from '../domain/keys.js';
import type { Choice } from '../terminal/prompt.js';
import { clip } from '../text/text.js';
import type { KeySession, Session } from '../session/session.js';
import { relativeTime } from '../views/time.js';

export type PickedKey = KeyView & { id: string };

/** Names in a pick-list are cut here, so that one long name does not push every row's columns off the screen. */
const PICK_NAME_WIDTH = 28;

/** The keys as pick-list choices in aligned columns: name, hint, status, last use; the id as the description. */
function keyChoices(keys: readonly PickedKey[], nowMs: number, inUse: string | undefined): Choice<PickedKey>[] {
  const rows = keys.map((k) => [
    k.name === null ? '-' : clip(k.name, PICK_NAME_WIDTH),
    k.hint === null ? '-' : clip(k.hint, 20),
    clip(keyStatus(k, nowMs) ?? '-', 12),
    !k.lastUsedKnown ? '' : k.lastUsedAt === null ? 'never used' : `used ${relativeTime(k.lastUsedAt, nowMs)}`,
  ]);
  const widths = (rows[0] ?? []).map((_, column) => Math.max(...rows.map((row) => [...row[column]!].length)));
  return keys.map((k, i) => ({
    name: `${rows[i]!.map((cell, column) => cell + ' '.repeat(widths[column]! - [...cell].length)).join('  ').trimEnd()}${isKeyInUse(k, inUse) ? '  ← in use' : ''}`,
    value: k,
    description: clip(k.id, 200),
    exact: k.name === null ? [k.id] : [k.name.trim(), k.id],
  }));
}

/** Only keys a request can name: a server's id may be none, or one no URL carries. */
function pickable(keys: readonly KeyView[], none = 'There are no keys.'): PickedKey[] {
  const found = keys.filter((k): k is PickedKey => k.id !== null && isAddressable(k.id));
  if (found.length === 0) throw new UsageError(none);
  return found;
}

/** How a command names the keys it acts on. */
export interface KeysWanted {
  /** The subcommand, for the usage message: `view`, `disable`, … */
  command: string;
  /** Several keys at once (revoke, enable, disable), or one (view, rotate). */
  many: boolean;
  /** The picker's question. */
  question: string;
  /** --yes was given: the person has said not to be asked, so no pick-list opens either. */
  yes?: boolean;
  /** Only these are offered (disable offers the keys that are not disabled); `none` says why the list is empty. */
  offered?: { keep: (key: KeyView) => boolean; none: string };
}

/**
 * The keys a command acts on, named one way in every command: the ids
 * given, each trimmed of the white space a paste brings along; none given,
 * on a terminal, the keys picked from the whole list, in the aligned
 * columns every picker has; none given elsewhere or under --yes, a usage
 * error showing the command's form. The list is returned when it was read, for whatever
 * the command says next.
 */
export async function keysToActOn(session: KeySession, given: readonly string[], wanted: KeysWanted): Promise<{ ids: string[]; list?: KeyList }> {
  if (given.length > 0) return { ids: given.map((id) => checkKeyId(id.trim())) };
  // A pick-list under --yes would choose a key nobody named, then act on it unasked.
  if (!session.canPrompt || wanted.yes === true) {
    throw new UsageError(`Missing the key id: svc keys ${wanted.command} <id>${wanted.many ? '…' : ''} (see \`svc keys list\`)`);
  }
  const { client } = session;
  const list = await client.listAllKeys();
  const keys = wanted.offered ? pickable(list.keys.filter(wanted.offered.keep), wanted.offered.none) : list.keys;
  let picked: PickedKey[];
  try {
    picked = wanted.many
      ? await pickKeys(session, keys, list.nowMs, client.keyHint, wanted.question)
      : [await pickKey(session, keys, list.nowMs, client.keyHint, wanted.question)];
  } catch (error) {
    // Esc or Ctrl-C at the list says what a declined confirmation says: the person stopped, and nothing was done.
    if (error instanceof PromptCancelledError) throw new PromptCancelledError(['Cancelled; nothing was done.'], error.signal);
    throw error;
  }
  return { ids: picked.map((key) => key.id), list };
}

/** One key from a list filtered as the person types. */
export async function pickKey(session: Session, keys: readonly KeyView[], nowMs: number, inUse: string | undefined, message: string): Promise<PickedKey> {
  const choices = keyChoices(pickable(keys), nowMs, inUse);
  return (await session.prompts()).search(message, choices);
}

/** Several keys, ticked in the same aligned list. */
export async function pickKeys(session: Session, keys: readonly KeyView[], nowMs: number, inUse: string | undefined, message: string): Promise<PickedKey[]> {
  const choices = keyChoices(pickable(keys), nowMs, inUse);
  const picked = await (await session.prompts()).pickMany(message, choices);
  if (picked.length === 0) throw new UsageError('No key selected.');
  return picked;
}
