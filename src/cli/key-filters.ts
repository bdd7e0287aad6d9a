import { keyStatus, type KeyView } from '../client/key-view.js';

/** `keys list` filters (docs/contract.md §C8); every one given must match. */
export interface ListFilter {
  /** Expires within this many milliseconds of now; expired keys included. */
  expiringWithinMs?: number;
  status?: string;
  /** A substring of the name, any case. */
  name?: string;
}

export function matchesFilter(key: KeyView, filter: ListFilter, nowMs: number): boolean {
  if (filter.expiringWithinMs !== undefined && (key.expiresAt === null || key.expiresAt > nowMs + filter.expiringWithinMs)) return false;
  if (filter.status !== undefined && keyStatus(key, nowMs) !== filter.status) return false;
  if (filter.name !== undefined && !(key.name ?? '').toLowerCase().includes(filter.name.toLowerCase())) return false;
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
    // A server that does not say when a key was last used gives no ground to call it unused.
    const since = key.lastUsedKnown ? (key.lastUsedAt ?? key.createdAt) : null;
    if (since === null || since > nowMs - criteria.unusedForMs) return false;
  }
  return true;
}
