/**
 * The look for what a create whose answer was lost made (docs/contract.md
 * §C4). A gateway that answers 504 while its upstream still works, or a
 * connection cut mid-answer, says nothing of when the key will be in the
 * list: svc reads the list again, with the client's retry policy for each
 * read, until it finds its own key, or until the create must have settled
 * (SETTLE_WINDOW_MS after the failure, and no sooner than GATEWAY_MS after
 * the request began), or the command's wait budget ends.
 */
import type { ApiClient } from '../../client/api.js';
import { ApiError, IncompleteListError, NetworkError } from '../../client/errors.js';
import { InterruptedError } from '../errors/errors.js';
import { serverSince, sortOut, type Sighting, type Wanted } from '../domain/own-key.js';

/**
 * How long after the failure a create may still land: about what a gateway
 * gives a slow upstream before it answers 504 on its behalf (nginx's and
 * haproxy's defaults are 60 s and 50 s from the request's start; a
 * request timed out by svc after its own 10 s has less of that left).
 */
export const SETTLE_WINDOW_MS = 30_000;

/**
 * How long after the request began a create may still land behind a
 * gateway: nginx gives an upstream 60 s by default (proxy_read_timeout),
 * haproxy 50 s, and svc's own timeout (10 s) may have ended the request
 * long before theirs; a little more for the upstream's own commit.
 */
export const GATEWAY_MS = 65_000;

/** The gaps between looks, the last repeated: soon at first, when most late answers land, then every 8 s. */
const LOOK_GAPS_MS = [1_000, 2_000, 4_000, 8_000];

/**
 * Why svc stopped looking: it found its key; the create must have settled;
 * --no-wait, or the wait budget, allowed no more waiting; a signal; or a
 * read failed in a way another would too (a 401, a rate limit past the budget).
 */
export type LookEnd = 'found' | 'settled' | 'no-wait' | 'budget' | 'signal' | 'failed';

export interface OrphanLookup {
  /** The last look that read the list; null when none did. */
  sighting: Sighting | null;
  looks: number;
  end: LookEnd;
  /** Why the last read failed, when it did (a failed read before a good one is forgotten). */
  failure: string | null;
  /** How long after the failure svc was to look, until the create must have settled. */
  windowMs: number;
}

export interface LookOptions {
  now: () => number;
  /** Settles when a signal asks svc to stop: the look ends at once with what it has. */
  stop: Promise<void>;
  /** One look and no wait: a signal asked svc to stop before it began. */
  once: boolean;
}

const STOPPED = Symbol('stopped');

export async function lookForOrphans(client: ApiClient, wanted: Wanted, { now, stop, once }: LookOptions): Promise<OrphanLookup> {
  const windowMs = Math.max(SETTLE_WINDOW_MS, wanted.beganMs + GATEWAY_MS - now());
  const settlesAt = now() + windowMs;
  const stopped = stop.then((): typeof STOPPED => STOPPED);
  let sighting: Sighting | null = null;
  let failure: string | null = null;
  // The pauses are counted too: a clock that stands still while svc sleeps (a test's) still ends the look.
  let pausedMs = 0;
  // Estimated once, from the first list: the nearest to the request, and the same for every look after it.
  let sinceMs: number | null = null;
  const since = (serverNowMs: number) => (sinceMs ??= serverSince(wanted.beganMs, serverNowMs, now()));
  for (let looks = 1; ; looks++) {
    const read = await Promise.race([readOnce(client, wanted, since), stopped]);
    const done = (end: LookEnd): OrphanLookup => ({ sighting, looks, end, failure, windowMs });
    if (read === STOPPED || read.kind === 'signal') return done('signal');
    if (read.kind === 'read') {
      sighting = read.sighting;
      failure = null;
      if (sighting.orphans.length > 0) return done('found');
    } else {
      failure = read.failure;
      if (!read.passing) return done('failed');
    }
    if (once) return done('signal');
    const settlesInMs = Math.min(settlesAt - now(), windowMs - pausedMs);
    if (settlesInMs <= 0) return done('settled');
    const room = client.waitRoomMs();
    if (room <= 0) return done(client.noWait ? 'no-wait' : 'budget');
    const ms = Math.min(LOOK_GAPS_MS[Math.min(looks, LOOK_GAPS_MS.length) - 1]!, settlesInMs, room);
    if ((await Promise.race([client.pause({ reason: 'settle', ms, looks, settlesInMs }), stopped])) === STOPPED) return done('signal');
    pausedMs += ms;
  }
}

type Read = { kind: 'read'; sighting: Sighting } | { kind: 'failed'; failure: string; passing: boolean } | { kind: 'signal' };

async function readOnce(client: ApiClient, wanted: Wanted, since: (serverNowMs: number) => number): Promise<Read> {
  try {
    const list = await client.listAllKeys();
    return { kind: 'read', sighting: sortOut(list, wanted, since(list.nowMs)) };
  } catch (error) {
    // Ctrl-C while the read's progress line showed cut it: the signal stops the look too.
    if (error instanceof InterruptedError) return { kind: 'signal' };
    return { kind: 'failed', failure: (error as Error).message, passing: passes(error) };
  }
}

/** A failure a later read may not meet: the network, a server failing, a list that moved while it was read. */
function passes(error: unknown): boolean {
  return (
    (error instanceof NetworkError && !error.final) ||
    (error instanceof ApiError && error.status >= 500) ||
    error instanceof IncompleteListError
  );
}
