/**
 * The --json documents of the two kinds several commands print, each built
 * here and nowhere else, so that one kind has one shape whichever command
 * printed it (docs/contract.md §C3): a new key (docs/new-key.schema.json)
 * and a change to keys (docs/key-change.schema.json).
 */
import type { PendingRotation } from '../config/store.js';
import type { Delivered } from '../errors/delivery-failed.js';
import type { KeyChange, KeyResult } from '../operations/change-keys.js';
import type { NewKey } from '../operations/create.js';

/**
 * A new key, from `keys create` (with or without delivery) and `keys
 * rotate` alike: the create's answer under `key`, beside what svc adds.
 * The answer is kept whole, not merged with svc's fields: a server may
 * have fields of any name in its record (§C6), and `.key.id` must mean the
 * same thing for every command that makes a key.
 */
export interface NewKeyDocument {
  /** The create's answer: the key's record, with its secret unless the secret went elsewhere. */
  key: unknown;
  /** The destinations that took the secret (--to-file, --to-command); empty when it is in `key`. */
  delivered: readonly Delivered[];
  /** Only after a delivery that failed with the secret kept out of the output: whether svc then revoked the key. */
  revoked?: boolean;
  /** `keys rotate` only: the server's answer about the old key, null while it was left as it was. */
  previous?: unknown;
  /** `keys rotate --overlap` only: the rotation the profile now remembers. */
  pending?: PendingRotation;
}

/**
 * What became of a new key's secret: printed in the document (`delivered`
 * null), or handed to destinations and so left out of it; `revoked` when
 * a failed delivery kept it out and svc then revoked the key (or could not).
 */
export interface NewKeyFate {
  delivered: readonly Delivered[] | null;
  revoked?: boolean;
}

export function newKeyDocument(key: NewKey, fate: NewKeyFate, rotation?: { previous: unknown; pending?: PendingRotation }): NewKeyDocument {
  const printed = fate.delivered === null;
  return {
    key: printed || key.secret === null ? key.document : withoutSecret(key.document, key.secret),
    delivered: fate.delivered ?? [],
    ...(fate.revoked === undefined ? {} : { revoked: fate.revoked }),
    ...(rotation === undefined ? {} : { previous: rotation.previous, ...(rotation.pending ? { pending: rotation.pending } : {}) }),
  };
}

/** `document` with every value equal to the secret left out, wherever the server put it. */
function withoutSecret(document: unknown, secret: string): unknown {
  if (Array.isArray(document)) return document.filter((item) => item !== secret).map((item) => withoutSecret(item, secret));
  if (typeof document !== 'object' || document === null) return document;
  return Object.fromEntries(Object.entries(document).flatMap(([name, value]) => (value === secret ? [] : [[name, withoutSecret(value, secret)]])));
}

/**
 * A change to keys: `keys revoke`, `enable`, `disable` and `prune`, one key
 * or many, and `keys rotate --finish|--cancel`. Always the same object, so
 * that a script reads `.changed[].id` whether one id or `--name … --all`
 * was given. `changed` holds only what this run changed: a key another
 * run revoked first is `alreadyGone`, so two prunes at once never both
 * claim a key.
 */
export interface KeyChangeDocument {
  change: KeyChange;
  /**
   * One entry a key this run changed: for a revoke the server's answer
   * (`{"id", "revoked": true}`; `"unconfirmed": true` when the answer was
   * lost and the retry found no key), for enable and disable the key's record.
   */
  changed: unknown[];
  /** Ids no key had when asked, where that is what was wanted (--if-exists, prune): nothing was done to them. */
  alreadyGone: string[];
  /** Ids no key had when asked, where that is a failure (an id given without --if-exists): svc exits 4. */
  notFound: string[];
  /** Keys whose change failed, with svc's message. */
  failed: { id: string; error: string }[];
  /** Arguments not tried: after a failure, or a signal. */
  notTried: string[];
  /** Why the key list svc read was read in part; null when it was read whole or not needed. */
  incomplete: string | null;
  /** `keys prune` only: the records of the keys that matched, which it set out to revoke (all that `--dry-run` shows). */
  matched?: readonly unknown[];
}

export interface KeyChangeContext {
  goneIsDone?: boolean;
  incomplete: string | null;
  matched?: readonly unknown[];
}

export function keyChangeDocument(change: KeyChange, results: readonly KeyResult[], context: KeyChangeContext): KeyChangeDocument {
  const document: KeyChangeDocument = { change, changed: [], alreadyGone: [], notFound: [], failed: [], notTried: [], incomplete: context.incomplete };
  for (const result of results) {
    if (result.state === 'lost') document.changed.push({ id: result.id, revoked: true, unconfirmed: true });
    else if (result.state === 'done') document.changed.push(changedEntry(result.id, result.changed));
    else if (result.state === 'gone') document[context.goneIsDone ? 'alreadyGone' : 'notFound'].push(result.id);
    else if (result.state === 'failed') document.failed.push({ id: result.id, error: (result.error as Error).message });
    else if (result.state === 'not-tried') document.notTried.push(result.arg);
  }
  return context.matched === undefined ? document : { ...document, matched: context.matched };
}

/** A revoke's answer as the server gave it, when it is an object that names the key; otherwise what it means. */
function changedEntry(id: string, changed: Extract<KeyResult, { state: 'done' }>['changed']): unknown {
  if (changed.kind === 'switched') return changed.document;
  const { answer } = changed;
  const namesKey = typeof answer === 'object' && answer !== null && !Array.isArray(answer) && typeof (answer as { id?: unknown }).id === 'string';
  return namesKey ? answer : { id, revoked: true };
}
