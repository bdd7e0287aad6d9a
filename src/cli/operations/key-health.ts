/**
 * What a command that used a key owes on stderr once it is done
 * (docs/contract.md §C8): that the key expires soon, and that a rotation is
 * pending. One step after every command and every interactive action, so
 * no path can skip it. A saved key's expiry is remembered in its profile
 * from the last key list that showed it, so commands that read no list
 * can warn too.
 */
import type { KeyList } from '../../client/api.js';
import { keyHint } from '../../contract/key-format.js';
import { holdsKey } from '../config/file.js';
import type { PendingRotation, Profile } from '../config/store.js';
import type { Credentials } from '../session/session.js';
import { keyState, type KeyState } from '../domain/key-state.js';

export interface KeyHealth {
  /** The key in use and when it expires, when that is known. */
  expiry: { hint: string; id: string; expiresAt: number; nowMs: number } | null;
  pending: PendingRotation | undefined;
  /** What the pending rotation's old key still does, when the command's key list showed it; null when it did not. */
  pendingOld: KeyState | null;
  /** What the profile should remember about its key's expiry, when that changed; null to leave it. */
  remember: NonNullable<Profile['keyExpiry']> | null;
}

export function assessKeyHealth(input: {
  credentials: Credentials;
  /** The profile as it is after the command. */
  profile: Readonly<Profile>;
  /** The key list the command read, if it read one. */
  list: KeyList | undefined;
  nowMs: number;
}): KeyHealth {
  const { credentials, profile, list } = input;
  const hint = keyHint(credentials.apiKey);
  const listed = list?.keys.find((key) => key.hint === hint && key.id !== null && key.expiresKnown);
  const isProfileKey = holdsKey(profile, credentials.apiKey);
  let remember: KeyHealth['remember'] = null;
  let expiry: KeyHealth['expiry'] = null;
  if (listed) {
    const fresh = { hint, id: listed.id!, expiresAt: listed.expiresAt === null ? null : new Date(listed.expiresAt).toISOString() };
    if (isProfileKey && !sameExpiry(profile.keyExpiry, fresh)) remember = fresh;
    if (listed.expiresAt !== null) expiry = { hint, id: listed.id!, expiresAt: listed.expiresAt, nowMs: list!.nowMs };
  } else if (isProfileKey && profile.keyExpiry?.hint === hint && profile.keyExpiry.expiresAt !== null) {
    const expiresAt = Date.parse(profile.keyExpiry.expiresAt);
    if (Number.isFinite(expiresAt)) expiry = { hint, id: profile.keyExpiry.id, expiresAt, nowMs: input.nowMs };
  }
  const pending = profile.pendingRotation;
  const old = pending && list?.keys.find((key) => key.id === pending.oldId);
  return { expiry, pending, pendingOld: old ? keyState(old, list!.nowMs) : null, remember };
}

/** Field by field: the file's own order of the fields (a hand edit, another writer) is no change to save. */
function sameExpiry(saved: Profile['keyExpiry'], fresh: NonNullable<Profile['keyExpiry']>): boolean {
  return saved !== undefined && saved.hint === fresh.hint && saved.id === fresh.id && saved.expiresAt === fresh.expiresAt;
}

/** SVC_EXPIRY_WARNING_DAYS: 7 by default, 0 for never; a value that is no number of days leaves the default. */
export function warningDays(value: string | undefined): number {
  const days = Number(value);
  return value !== undefined && value.trim() !== '' && Number.isFinite(days) && days >= 0 ? days : 7;
}

/** Whether the known expiry falls within the warning window. */
export function expiresSoon(expiry: NonNullable<KeyHealth['expiry']>, days: number): boolean {
  return days > 0 && expiry.expiresAt - expiry.nowMs <= days * 86_400_000;
}
