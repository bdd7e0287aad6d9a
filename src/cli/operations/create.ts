/**
 * POST /user/api-keys, and what svc does when its outcome is unknown
 * (docs/contract.md §C4): it looks for the key it may have made until the
 * create must have settled, revokes the keys it can tell for its own
 * (nobody has their secret), and returns what it found as data in a
 * MaybeCreatedError.
 */
import type { ApiClient, RequestPhase, RetryReason } from '../../client/api.js';
import { ApiError, NetworkError, UnexpectedResponseError } from '../../client/errors.js';
import { findSecret, readKey, type KeyView } from '../../client/key-view.js';
import { keyIn } from '../../contract/key-format.js';
import type { Marks } from '../../client/marks.js';
import type { CreateKeyRequest } from '../../contract/types.js';
import { answerThroughInterrupt, whyNothingYet } from '../terminal/answer-through-interrupt.js';
import { parseDuration } from '../domain/duration.js';
import type { Deps } from '../terminal/deps.js';
import { InterruptedError } from '../errors/errors.js';
import { stoppedDuringCreate } from '../errors/create.js';
import { isNotFound } from '../domain/keys.js';
import { clip } from '../text/text.js';
import { lookForOrphans } from './look-for-orphans.js';
import type { OrphanFate } from '../errors/maybe-created.js';
import { MaybeCreatedError } from './maybe-created.js';

/** A key the server just made: its document as it came, and the secret found in it, if any. */
export interface NewKey {
  document: unknown;
  secret: string | null;
  view: KeyView;
  /** The server's clock when it answered, for "expires in …". */
  nowMs: number;
  /** The signal (Ctrl-C, SIGTERM) that came while the request was out, if any: the key is shown, then the command stops with its code. */
  interrupted: NodeJS.Signals | null;
}

/** What a create watches while its request is out. */
export interface CreateWatch {
  now: () => number;
  onSignal: Deps['onSignal'];
  /** Told of the first Ctrl-C (or SIGTERM) while the request is out, when svc waits on for the answer. */
  interrupted(): void;
  /**
   * An answer svc cannot read, which may hold the secret: shown for the
   * person to keep (the default), or let go and its key revoked, where the
   * key is a job's that nobody is to keep (svc run --ephemeral, whose
   * stdout is the job's log).
   */
  unreadableAnswer?: 'show' | 'drop';
}

/**
 * A key named `name` that expires at a time or after a lifetime; "in 30
 * days" is read on the server's clock (with a skewed clock of ours a short
 * lifetime would be refused as past), and carries svc's mark (client/marks.ts).
 * A time the person gave is sent as given.
 */
export async function createExpiringKey(
  client: ApiClient,
  name: string,
  expiry: { expiresIn?: string; expiresAt?: string },
  watch: CreateWatch,
): Promise<NewKey> {
  const lifetimeMs = expiry.expiresIn === undefined ? undefined : parseDuration(expiry.expiresIn);
  const serverNow = lifetimeMs === undefined ? 0 : await client.readServerClock();
  const expiresAt = lifetimeMs === undefined ? expiry.expiresAt : client.marks.expiry(serverNow + lifetimeMs, serverNow);
  return createKey(client, expiresAt ? { name, expiresAt } : { name }, watch);
}

/**
 * The create. A first Ctrl-C while its request is out does not drop the
 * answer, which holds the only copy of the secret: svc waits on for it
 * (the caller is told, to say so), shows the key, then stops. A second one
 * stops at once, naming what may have been made. Between attempts none of
 * which can have made a key (a rate-limit wait after a 429, which is a
 * refusal; a retry after a connection that never reached the server) there
 * is no answer to wait for: a Ctrl-C there, or one that came while the
 * refused attempt was out, stops then, saying no key was made. `existing`
 * are ids known to be older than the request (a rotation's old key, of the
 * same name): a look for what a lost answer made never takes them for it.
 */
export async function createKey(client: ApiClient, request: CreateKeyRequest, watch: CreateWatch, existing: readonly string[] = []): Promise<NewKey> {
  const { now } = watch;
  const marks = client.marks.take(request);
  const began = now();
  let interrupted: NodeJS.Signals | null = null;
  let phase: RequestPhase = { state: 'out' };
  const nothingMade = (signal: NodeJS.Signals) =>
    phase.state === 'waiting' && !phase.afterLostAnswer ? noKeyMade(request.name, phase.reason, signal) : undefined;
  const onPhase = (next: RequestPhase) => {
    phase = next;
    const stop = interrupted === null ? undefined : nothingMade(interrupted);
    if (stop) throw stop;
  };
  try {
    const { body } = await answerThroughInterrupt(
      watch.onSignal,
      (signal) => {
        const stop = nothingMade(signal);
        if (stop) return stop;
        interrupted = signal;
        watch.interrupted();
      },
      (signal) => stoppedDuringCreate(request.name, signal),
      () => client.createKey(request, { onPhase }),
    );
    return { document: body, secret: findSecret(body), view: readKey(body), nowMs: client.serverNow(), interrupted };
  } catch (error) {
    if (!mayHaveCreated(error)) throw error;
    // A body svc cannot parse may still hold the secret, where it holds a value shaped like a key: the report prints what
    // there is, for the person to keep. One that holds none (an HTML page) gives nobody the secret, nor one a job's key came in.
    const answer = error instanceof UnexpectedResponseError && watch.unreadableAnswer !== 'drop' && keyIn(error.text) !== null ? error.text : null;
    throw await afterLostAnswer(client, request, { cause: error, answer, marks, began, existing, interrupted }, watch);
  }
}

/**
 * The look for what the create made, then svc's own keys among what it
 * found revoked: nobody has their secret, unless the unreadable answer svc
 * prints holds it, and then they are left for the person (orphans.ts). A
 * first signal ends the look where it is (one that came while the create
 * was out leaves it one look); the revoke is waited through it, and a
 * second stops that too.
 */
async function afterLostAnswer(
  client: ApiClient,
  request: CreateKeyRequest,
  failed: { cause: unknown; answer: string | null; marks: Marks; began: number; existing: readonly string[]; interrupted: NodeJS.Signals | null },
  watch: CreateWatch,
): Promise<MaybeCreatedError> {
  const { marks } = failed;
  let signal = failed.interrupted;
  let signals = signal === null ? 0 : 1;
  let stopLook!: () => void;
  let stopRevoke!: () => void;
  const lookStopped = new Promise<void>((resolve) => (stopLook = resolve));
  const revokeStopped = new Promise<void>((resolve) => (stopRevoke = resolve));
  const off = watch.onSignal(['SIGINT', 'SIGTERM', 'SIGHUP'], (received) => {
    signal ??= received;
    stopLook();
    if (++signals >= 2) stopRevoke();
  });
  try {
    const wanted = { name: request.name, marks, beganMs: failed.began, existing: failed.existing };
    const lookup = await lookForOrphans(client, wanted, { now: watch.now, stop: lookStopped, once: failed.interrupted !== null });
    const ids = (lookup.sighting?.orphans ?? []).map((key) => key.id);
    const fates =
      failed.answer === null
        ? await revokeOrphans(client, ids, { asked: () => signals >= 2, came: revokeStopped })
        : new Map(ids.map((id) => [id, { state: 'left' } as const]));
    return new MaybeCreatedError(failed.cause, request.name, lookup, marks.name || marks.expiresAtMs !== null, failed.answer, fates, signal);
  } finally {
    off();
  }
}

const STOPPED = Symbol('stopped');

/** A request to stop: whether it came, and its coming. */
interface Stop {
  asked: () => boolean;
  came: Promise<void>;
}

/**
 * Each in turn; a key already gone counts as revoked. Once a stop is
 * asked, the revoke out is left to land or not, and the rest are not tried.
 */
async function revokeOrphans(client: ApiClient, ids: readonly string[], stop: Stop): Promise<Map<string, OrphanFate>> {
  const fates = new Map<string, OrphanFate>();
  const stopped = stop.came.then((): typeof STOPPED => STOPPED);
  for (const id of ids) {
    if (stop.asked()) {
      fates.set(id, { state: 'failed', why: 'svc was stopped before its revoke' });
      continue;
    }
    const revoked = client.revokeKey(id).then(
      (): OrphanFate => ({ state: 'revoked' }),
      (error): OrphanFate => (isNotFound(error) ? { state: 'revoked' } : { state: 'failed', why: (error as Error).message }),
    );
    const fate = await Promise.race([revoked, stopped]);
    fates.set(id, fate === STOPPED ? { state: 'stopped' } : fate);
  }
  return fates;
}

/** Stopped before a create was tried again, when no attempt so far can have made a key. */
function noKeyMade(name: string, reason: RetryReason, signal: NodeJS.Signals): InterruptedError {
  return new InterruptedError([`Stopped before the create was tried again: ${whyNothingYet(reason)}, so no key named '${clip(name, 200)}' was made. Nothing was changed.`], signal);
}

function mayHaveCreated(error: unknown): boolean {
  return (
    (error instanceof NetworkError && error.mayHaveReachedServer) ||
    (error instanceof ApiError && error.status >= 500) ||
    error instanceof UnexpectedResponseError
  );
}
