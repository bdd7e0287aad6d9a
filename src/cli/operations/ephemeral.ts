/**
 * `svc run --ephemeral` (docs/contract.md §C10): a key made for one
 * command, expiring after a lifetime read on the server's clock, at the
 * expiry the server says it gave it; and its revocation once the command
 * is over, done only when the server says so. Every request goes through
 * `guard`, the caller's watch over the signals that come while it is out.
 * svc's reaper (commands/reap.ts) revokes through here too.
 */
import { basename } from 'node:path';
import { PROBE, type ApiClient } from '../../client/api.js';
import { ApiError, RateLimitedError } from '../../client/errors.js';
import { CliError } from '../errors/errors.js';
import {
  commandNotRun,
  commandTakenForLifetime,
  ephemeralMayWork,
  ephemeralRevokeFailed,
  ephemeralStillWorks,
  lifetimeTooLong,
  type NotRunReason,
} from '../errors/ephemeral.js';
import { isNotFound } from '../domain/keys.js';
import { clip } from '../text/text.js';
import type { Deps } from '../terminal/deps.js';
import { parseDuration } from '../domain/duration.js';
import { createKey } from './create.js';
import type { Wanted } from '../domain/own-key.js';

export const DEFAULT_LIFETIME = '1h';
/** The longest --ephemeral: a key for one command that outlives a working day is no longer one. */
export const MAX_LIFETIME = '24h';
/**
 * How much later than asked the server's expiry may be: its clock and ours
 * disagree by a little, a server may round. More, and svc's promise that
 * the key is gone by then if all else fails would not hold.
 */
export const EXPIRY_SLACK_MS = 60_000;

/**
 * How long after svc's end its reaper (commands/reap.ts) goes on trying to
 * revoke the key: docs/contract.md §C10 promises the key is gone within
 * it, while the server answers; retries and rate-limit waits included.
 */
export const REAP_BOUND_MS = 15_000;

export interface EphemeralKey {
  id: string;
  secret: string;
  name: string;
  /** The expiry the server gave the key, as it said it. */
  expiresAt: string;
}

/** A key made for a command, and how far the server's clock, which its expiry is on, is from this machine's. */
export interface MadeKey extends EphemeralKey {
  clockSkewMs: number;
}

/** Which request a signal came during: nothing is made yet, a key may be, or one is being revoked. */
export type Step = { kind: 'clock' } | { kind: 'create'; name: string; expiresAt: string; wanted: Wanted } | { kind: 'revoke'; key: EphemeralKey };

/** `work`, with the signals that come while it is out answered as the caller sees fit for `step`. */
export type Guard = <T>(step: Step, work: () => Promise<T>) => Promise<T>;

/** No watch: the reaper's requests, in a process no signal of the job reaches. */
export const unguarded: Guard = (_step, work) => work();

/** `--ephemeral [duration]`: its lifetime in milliseconds; a usage error past MAX_LIFETIME. */
export function ephemeralLifetime(given: string | true): number {
  // `svc run --ephemeral deploy.sh`: the option's value is optional, so the command's name was taken for it.
  if (given !== true && !/^\s*\d/.test(given)) throw commandTakenForLifetime(given);
  const lifetime = parseDuration(given === true ? DEFAULT_LIFETIME : given);
  if (lifetime > parseDuration(MAX_LIFETIME)) throw lifetimeTooLong(String(given), MAX_LIFETIME);
  return lifetime;
}

export async function createEphemeralKey(
  client: ApiClient,
  request: { name: string | undefined; lifetimeMs: number; command: string },
  guard: Guard,
  now: Deps['now'],
): Promise<MadeKey> {
  const serverNow = await guard({ kind: 'clock' }, () => client.readServerClock());
  const clockSkewMs = serverNow - now();
  const asked = client.marks.expiry(serverNow + request.lifetimeMs, serverNow);
  const askedMs = Date.parse(asked);
  const name = request.name ?? client.marks.name(`run ${clip(basename(request.command), 60)} ${new Date(serverNow).toISOString().replace(/\.\d+Z$/, 'Z')}`);
  // The run's own watch answers the signals (the guard): the create's must not answer them a second time.
  const watch = { now, onSignal: () => () => {}, interrupted: () => {}, unreadableAnswer: 'drop' as const };
  // What tells this create's key from every other, for whoever must look for it if its answer never comes (svc's reaper).
  const wanted: Wanted = { name, marks: { name: request.name === undefined, expiresAtMs: askedMs }, beganMs: now(), existing: [] };
  const made = await guard({ kind: 'create', name, expiresAt: asked, wanted }, () => createKey(client, { name, expiresAt: asked }, watch));
  const { id } = made.view;
  const refuse = async (reason: NotRunReason, revokable: EphemeralKey | null) => {
    if (revokable !== null) await revokeEphemeralKey(client, revokable, guard);
    throw commandNotRun(reason, revokable?.id ?? null, name, asked);
  };
  if (made.secret === null || id === null) return refuse({ kind: made.secret === null ? 'no-secret' : 'no-id' }, id === null ? null : { id, secret: '', name, expiresAt: asked });
  const key = { id, secret: made.secret, name, expiresAt: asked };
  const given = made.view.expiresAt ?? (await guard({ kind: 'revoke', key }, () => expiryOnRecord(client, id)));
  if (given === null) return refuse({ kind: 'no-expiry', asked }, key);
  if (given > askedMs + EXPIRY_SLACK_MS) return refuse({ kind: 'later-expiry', given: new Date(given).toISOString(), asked }, key);
  return { ...key, expiresAt: new Date(given).toISOString(), clockSkewMs };
}

/** The expiry the key's record shows, where the create's answer showed none (a proxy that drops fields); null when none can be read. */
async function expiryOnRecord(client: ApiClient, id: string): Promise<number | null> {
  try {
    return (await client.getKey(id)).view.expiresAt;
  } catch {
    return null;
  }
}

/**
 * The key made for the command, revoked. A key already gone counts as
 * revoked only once the server says it is gone: a 404 to the revoke of a
 * key that still works (a proxy's page, another route) is no revoke, so
 * svc asks with the key's own secret, which a gone key cannot pass.
 * Throws, naming the key, its expiry and the command that revokes it,
 * when it is not revoked or svc cannot tell.
 */
export async function revokeEphemeralKey(client: ApiClient, key: EphemeralKey, guard: Guard, sleep?: Deps['sleep']): Promise<void> {
  // The 404's message; null for one on a retry.
  let notFound: string | null;
  try {
    // A 404 on a retry, after an attempt whose answer was lost, says no more than a first one: that attempt may never have arrived.
    if (!(await guard({ kind: 'revoke', key }, () => client.revokeKey(key.id, { finish: true }))).goneOnRetry) return;
    notFound = null;
  } catch (error) {
    if (error instanceof SignalStop) throw error;
    if (!isNotFound(error)) throw ephemeralRevokeFailed(key, (error as Error).message);
    notFound = (error as ApiError).message;
  }
  const gone = await guard({ kind: 'revoke', key }, () => confirmGone(client, key, sleep));
  if (gone === true) return;
  if (gone === false) throw ephemeralStillWorks(key, notFound);
  throw ephemeralMayWork(key, notFound, gone.why);
}

/**
 * A revoked key stops working within seconds (the spec): a key that still
 * works is asked again a little later before it is said not to be gone.
 */
const RECHECK_MS = [1_000, 2_000];

async function confirmGone(client: ApiClient, key: EphemeralKey, sleep?: Deps['sleep']): Promise<true | false | { why: string }> {
  for (let attempt = 0; ; attempt++) {
    try {
      if (key.secret === '') await client.getKey(key.id);
      else await client.withApiKey(key.secret).probeKeyList(PROBE);
    } catch (error) {
      if (error instanceof ApiError && (error.status === 401 || (key.secret === '' && error.status === 404))) return true;
      // Rate limited is no refusal: the key was taken, and still works.
      if (!(error instanceof RateLimitedError)) return { why: (error as Error).message };
    }
    const wait = RECHECK_MS[attempt];
    if (wait === undefined || sleep === undefined) return false;
    await sleep(wait);
  }
}

/** A second signal while a request was out: svc stops at once, saying what it leaves behind. */
export class SignalStop extends CliError {
  constructor(lines: readonly string[], exitCode: number, signal: NodeJS.Signals) {
    super(lines, exitCode as CliError['exitCode'], undefined, signal);
    this.name = 'SignalStop';
  }
}
