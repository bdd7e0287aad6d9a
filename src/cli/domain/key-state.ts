/**
 * What a key svc leaves as it is can still do, and how svc says it: the one
 * rule behind every "it still works" in svc's advice (docs/contract.md
 * §C3). svc never says a key works when it has expired or is disabled,
 * never offers to enable one that has expired, and says only "is not
 * revoked" when it did not read the key's state (it may be disabled, or
 * revoked elsewhere). Pure: no I/O.
 */
import { keyStatus, type KeyView } from '../../client/key-view.js';

export type KeyState =
  /** Enabled, not expired; `until` is its expiry (null: it never expires). */
  | { works: 'yes'; until: number | null }
  /** Disabled and not expired: one `keys enable` makes it work again. */
  | { works: 'if-enabled'; until: number | null }
  /** Expired (at `at`, when known): nothing makes it work again. */
  | { works: 'no'; at: number | null }
  /** Not read (a profile's record at most): `until` is the expiry recorded (null: none; undefined: not known). */
  | { works: 'unknown'; until: number | null | undefined };

/** From the key's record as read, at the server's clock (`nowMs`). */
export function keyState(key: KeyView, nowMs: number): KeyState {
  const until = key.expiresKnown ? key.expiresAt : null;
  const status = keyStatus(key, nowMs);
  if (status === 'expired' || (until !== null && until <= nowMs)) return { works: 'no', at: until };
  if (status === 'enabled') return { works: 'yes', until };
  if (status === 'disabled') return { works: 'if-enabled', until };
  return { works: 'unknown', until: key.expiresKnown ? key.expiresAt : undefined };
}

/**
 * From the expiry a profile recorded for its key (`record`, an ISO time or
 * null for none; undefined when none was recorded), at this machine's clock:
 * nothing else of its state is known without asking the server.
 */
export function recordedKeyState(record: string | null | undefined, nowMs: number): KeyState {
  if (record === undefined) return { works: 'unknown', until: undefined };
  if (record === null) return { works: 'unknown', until: null };
  const at = Date.parse(record);
  if (!Number.isFinite(at)) return { works: 'unknown', until: undefined };
  return at <= nowMs ? { works: 'no', at } : { works: 'unknown', until: at };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** What the key still does, to end a sentence "the key X …". */
export function stillDoes(state: KeyState): string {
  switch (state.works) {
    case 'yes':
      return state.until === null ? 'still works until revoked' : `still works until revoked or until it expires at ${iso(state.until)}`;
    case 'if-enabled':
      return `is disabled: it works again if enabled${state.until === null ? '' : `, until it expires at ${iso(state.until)}`}`;
    case 'no':
      return `has expired${state.at === null ? '' : ` (at ${iso(state.at)})`} and cannot work again, enabled or not`;
    case 'unknown':
      // This machine's clock, not the server's: the expiry is said as recorded, not as still to come.
      return `is not revoked${state.until === undefined || state.until === null ? '' : ` (its recorded expiry: ${iso(state.until)})`}`;
  }
}

/** Whether svc may say the key keeps working: it is enabled, or svc did not read it (never of a disabled or expired one). */
export function mayStillWork(state: KeyState): boolean {
  return state.works === 'yes' || state.works === 'unknown';
}

/** Whether a revoke is still worth advising: not for a key that has expired. */
export function worthRevoking(state: KeyState): boolean {
  return state.works !== 'no';
}
