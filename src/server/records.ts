import type { Plan } from '../contract/plans.js';
import { nameProblem } from './validation.js';

/**
 * The records the state file holds, as both of its formats and the journal
 * read them, and the error a damaged one raises.
 */
export class SnapshotError extends Error {}

export interface SavedUser {
  id: string;
  name: string;
  activeWorkspaceId: string;
  workspaceIds: string[];
}

export interface SavedWorkspace {
  id: string;
  name: string;
  plan: Plan;
}

/** A key's fields as memory holds them: times in milliseconds since the epoch. */
export interface KeyFields {
  id: string;
  userId: string;
  workspaceId: string;
  name: string;
  hash: string;
  hint: string;
  enabled: boolean;
  createdAt: number;
  expiresAt: number | null;
  lastUsedAt: number | null;
}

/** As the API stores a name: already trimmed, and then what validName asks. */
export function checkName(value: unknown, label: string): string {
  if (typeof value !== 'string') throw new SnapshotError(`${label}: "name" is not a string`);
  if (value !== value.trim()) throw new SnapshotError(`${label}: "name" begins or ends with white space, which the API trims`);
  const problem = nameProblem(value);
  if (problem) throw new SnapshotError(`${label}: "name" ${problem}`);
  return value;
}

/** The API takes an expiry only in the future (validation.ts, validCreateKey), so no key it made expires at or before its creation. */
export const EXPIRY_BEFORE_CREATION = '"expiresAt" is not after "createdAt", as the API requires';

export function expiresBeforeCreated(createdAt: number, expiresAt: number | null): boolean {
  return expiresAt !== null && expiresAt <= createdAt;
}
