import { keyStatus, type KeyView } from '../../client/key-view.js';
import { namedExactly } from './keys.js';

/** `keys list` filters (docs/contract.md §C8); every one given must match. */
export interface ListFilter {
  /** Expires within this many milliseconds of now; expired keys included. */
  expiringWithinMs?: number;
  status?: string;
  /** A substring of the name, any case. */
  name?: string;
  /** The whole name, as `keys revoke --name` reads one: trimmed, in its case. */
  nameExact?: string;
}

export function matchesFilter(key: KeyView, filter: ListFilter, nowMs: number): boolean {
  if (filter.expiringWithinMs !== undefined && (key.expiresAt === null || key.expiresAt > nowMs + filter.expiringWithinMs)) return false;
  if (filter.status !== undefined && keyStatus(key, nowMs) !== filter.status) return false;
  if (filter.name !== undefined && !(key.name ?? '').toLowerCase().includes(filter.name.toLowerCase())) return false;
  if (filter.nameExact !== undefined && namedExactly([key], filter.nameExact.trim()).length === 0) return false;
  return true;
}

/** `keys prune` criteria (docs/contract.md §C8); every one given must match. */
export interface PruneCriteria {
  expired?: boolean;
  disabled?: boolean;
  /** Not used (or, never used, not created) for this many milliseconds. */
  unusedForMs?: number;
}

export function matchesPrune(key: KeyView, criteria: PruneCriteria, nowMs: number): boolean {
  if (criteria.expired && !(keyStatus(key, nowMs) === 'expired' || (key.expiresAt !== null && key.expiresAt <= nowMs))) return false;
  if (criteria.disabled && !(key.enabled === false || keyStatus(key, nowMs) === 'disabled')) return false;
  if (criteria.unusedForMs !== undefined) {
    const since = lastActivity(key);
    if (since === null || since > nowMs - criteria.unusedForMs) return false;
  }
  return true;
}

/**
 * When the key was last used, or created for a key never used; null when
 * that cannot be told: a server that does not say when a key was last used
 * gives no ground to call it unused.
 */
export function lastActivity(key: KeyView): number | null {
  return key.lastUsedKnown ? (key.lastUsedAt ?? key.createdAt) : null;
}

/** A filter or prune flag that could not judge some keys: they lack the field it reads. */
export interface Unjudged {
  flag: string;
  /** The field, as a person calls it: "expiry time". */
  field: string;
  count: number;
}

/**
 * How many keys each given filter could not judge for want of its field
 * (another server's spelling, or none sent); such a key is left out, and
 * saying how many is what tells "no match" from "could not tell".
 */
export function unjudgedByFilter(keys: readonly KeyView[], filter: ListFilter, nowMs: number): Unjudged[] {
  return counted(keys, [
    filter.expiringWithinMs !== undefined && { flag: '--expiring', field: 'expiry time', lacks: (k: KeyView) => !k.expiresKnown },
    filter.status !== undefined && { flag: '--status', field: 'state', lacks: (k: KeyView) => keyStatus(k, nowMs) === null },
    filter.name !== undefined && { flag: '--name', field: 'name', lacks: (k: KeyView) => k.name === null },
    filter.nameExact !== undefined && { flag: '--name-exact', field: 'name', lacks: (k: KeyView) => k.name === null },
  ]);
}

export function unjudgedByPrune(keys: readonly KeyView[], criteria: PruneCriteria): Unjudged[] {
  return counted(keys, [
    criteria.expired === true && { flag: '--expired', field: 'expiry time or state', lacks: (k: KeyView) => !k.expiresKnown && k.status === null },
    criteria.disabled === true && { flag: '--disabled', field: 'on/off state', lacks: (k: KeyView) => k.enabled === null && k.status === null },
    criteria.unusedForMs !== undefined && {
      flag: '--unused-for',
      field: 'last use',
      lacks: (k: KeyView) => lastActivity(k) === null,
    },
  ]);
}

type Check = { flag: string; field: string; lacks: (key: KeyView) => boolean } | false;

function counted(keys: readonly KeyView[], checks: Check[]): Unjudged[] {
  const out: Unjudged[] = [];
  for (const check of checks) {
    if (!check) continue;
    const count = keys.filter(check.lacks).length;
    if (count > 0) out.push({ flag: check.flag, field: check.field, count });
  }
  return out;
}
