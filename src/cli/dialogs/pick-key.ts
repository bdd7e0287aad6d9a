import { keyStatus, type KeyView } from '../../client/key-view.js';
import { UsageError } from '../errors.js';
import { isAddressable, isKeyInUse } from '../keys.js';
import type { Choice } from '../prompt.js';
import { clip } from '../render/text.js';
import type { Session } from '../session.js';
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
  }));
}

/** Only keys a request can name: a server's id may be none, or one no URL carries. */
function pickable(keys: readonly KeyView[]): PickedKey[] {
  const found = keys.filter((k): k is PickedKey => k.id !== null && isAddressable(k.id));
  if (found.length === 0) throw new UsageError('There are no keys.');
  return found;
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
