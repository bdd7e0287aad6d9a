/**
 * Which keys of a list a lost create may have made (docs/contract.md §C4),
 * sorted into those svc can tell for its own and those it cannot. A key is
 * svc's own only by a mark nobody else sends (client/marks.ts): the name svc
 * drew, or the expiry it drew, listed back exactly. Besides, always: the
 * name sent, made at or after the request began (at the server's
 * precision), not a key known to be older (`existing`), and never used, as
 * far as its record shows: a key someone used is one whose secret someone
 * holds. A key that passes all but the mark may be another job's, made
 * with the same name in the same moment: a candidate, never revoked.
 */
import type { KeyList } from '../../client/api.js';
import { neverUsed, type KeyView } from '../../client/key-view.js';
import type { Marks } from '../../client/marks.js';

export type ListedKey = KeyView & { id: string };
export type DatedKey = ListedKey & { createdAt: number };

/** One look at the list. */
export interface Sighting {
  /** svc's own, by its mark. */
  orphans: DatedKey[];
  /** The name and the time fit but no mark tells them; `createdAt` null: a time svc cannot read. */
  candidates: ListedKey[];
  /** Keys whose name svc cannot read: any of them may be the one. */
  unnamed: number;
  /** Why the list may lack keys the server has, when it may. */
  incomplete: string | null;
  /** More than one key carried this create's mark, which one create cannot have made: another job drew the same. */
  collided: boolean;
}

export interface Wanted {
  name: string;
  marks: Marks;
  /** svc's clock when the request began. */
  beganMs: number;
  existing: readonly string[];
}

/** `sinceMs`: when the request began, on the server's clock (serverSince). */
export function sortOut(list: KeyList, wanted: Wanted, sinceMs: number): Sighting {
  const since = floorTo(sinceMs, timeUnitMs(list.keys));
  const orphans: DatedKey[] = [];
  const candidates: ListedKey[] = [];
  list.keys.forEach((key, i) => {
    if (key.name !== wanted.name || key.id === null || wanted.existing.includes(key.id)) return;
    if (!neverUsed(list.documents[i])) return;
    const listed = key as ListedKey;
    if (listed.createdAt === null) candidates.push(listed);
    else if (listed.createdAt >= since) (marked(listed, wanted.marks) ? orphans : candidates).push(listed as DatedKey);
  });
  const unnamed = list.keys.filter((k) => k.name === null).length;
  // One create makes one key: two that carry its mark mean another job drew the same, and none of them can be told for svc's.
  if (orphans.length > 1) return { orphans: [], candidates: orphans, unnamed, incomplete: list.incomplete, collided: true };
  // Every key svc makes carries its marks: once one is listed with them, the server keeps them, and a key without them is
  // another's. So it is too where the server shows that it keeps an expiry's milliseconds, which svc's mark is drawn in.
  const mine = orphans.length > 0 || (wanted.marks.expiresAtMs !== null && keepsMilliseconds(list.keys));
  return { orphans, candidates: mine ? [] : candidates, unnamed, incomplete: list.incomplete, collided: false };
}

/** Whether a listed expiry has milliseconds other than .000: a server that keeps them, and so would list svc's mark back. */
function keepsMilliseconds(keys: readonly KeyView[]): boolean {
  return keys.some((key) => key.expiresAt !== null && key.expiresAt % 1000 !== 0);
}

function marked(key: KeyView, marks: Marks): boolean {
  return marks.name || (marks.expiresAtMs !== null && key.expiresAt === marks.expiresAtMs);
}

/**
 * "Since the request began" is read on the server's clock. Its Date header
 * has whole seconds, so a clock within 2 s of ours is taken to be ours
 * (allowing for ordinary skew); a farther one is estimated from the
 * client's reading of it (`serverNowMs` against `localNow`, ours), with
 * room for its rounding.
 */
export function serverSince(beganMs: number, serverNowMs: number, localNow: number): number {
  if (Math.abs(serverNowMs - localNow) <= 2_000) return beganMs - 250;
  return beganMs + (serverNowMs - localNow) - 1_500;
}

/**
 * The unit the server writes creation times in: the coarsest of 1 s, 100 ms
 * and 10 ms that every listed time is a whole number of. One that writes
 * whole seconds (epoch seconds, or RFC 3339 without a fraction) lists a key
 * made at :17.8 as made at :17, before a request that began at :17.7; its
 * times are compared at its own precision. A list of times to the
 * millisecond all but surely holds one that is not a multiple of 10 ms, and
 * keeps the comparison to the millisecond.
 */
function timeUnitMs(keys: readonly KeyView[]): number {
  const times = keys.map((k) => k.createdAt).filter((t): t is number => t !== null);
  return [1000, 100, 10].find((unit) => times.every((t) => t % unit === 0)) ?? 1;
}

function floorTo(ms: number, unitMs: number): number {
  return Math.floor(ms / unitMs) * unitMs;
}
