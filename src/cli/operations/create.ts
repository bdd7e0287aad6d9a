/**
 * POST /user/api-keys, and what svc does when its outcome is unknown
 * (docs/contract.md §C4): it looks once for keys of that name made since
 * the request began and returns them as data in a MaybeCreatedError.
 */
import type { ApiClient, RequestPhase, WaitEvent } from '../../client/api.js';
import { ApiError, NetworkError, UnexpectedResponseError } from '../../client/errors.js';
import { findSecret, readKey, type KeyView } from '../../client/key-view.js';
import type { CreateKeyRequest } from '../../contract/types.js';
import { answerThroughInterrupt, whyNothingYet } from '../answer-through-interrupt.js';
import { parseDuration } from '../duration.js';
import type { Deps } from '../deps.js';
import { CliError, ExitCode, InterruptedError, signalExitCode } from '../errors.js';
import { revokeCommand } from '../keys.js';
import { clip, shellWord } from '../render/text.js';

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
}

/** The server answered, but svc cannot tell which part of the answer is the secret (docs/contract.md §C6). */
export class SecretNotFoundError extends CliError {
  constructor(id: string | null) {
    super(
      [
        "The key was created, but svc could not find its secret in the server's answer, printed on stdout as it came",
        "(svc looks for a 'secret' field, or one value of the form sk_ + 64 letters and digits).",
        `If the secret is there, store it now; if not, revoke the key (${revokeCommand(id)}) and tell the service's operators.`,
      ],
      ExitCode.failure,
    );
    this.name = 'SecretNotFoundError';
  }
}

/**
 * A key named `name` that expires at a time or after a lifetime; "in 30
 * days" is read on the server's clock (with a skewed clock of ours a short
 * lifetime would be refused as past).
 */
export async function createExpiringKey(
  client: ApiClient,
  name: string,
  expiry: { expiresIn?: string; expiresAt?: string },
  watch: CreateWatch,
): Promise<NewKey> {
  const lifetimeMs = expiry.expiresIn === undefined ? undefined : parseDuration(expiry.expiresIn);
  const expiresAt = lifetimeMs === undefined ? expiry.expiresAt : new Date((await client.readServerClock()) + lifetimeMs).toISOString();
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
      (signal) =>
        new InterruptedError(
          [
            `Stopped while the create was out: a key named '${clip(request.name, 200)}' may have been made, and nobody has seen its secret.`,
            `Find it with \`svc keys list --name ${shellWord(request.name)}\` and revoke it.`,
          ],
          signal,
        ),
      () => client.createKey(request, { onPhase }),
    );
    return { document: body, secret: findSecret(body), view: readKey(body), nowMs: client.serverNow(), interrupted };
  } catch (error) {
    if (!mayHaveCreated(error)) throw error;
    // A body svc cannot parse may still hold the secret: the report prints what there is.
    const answer = error instanceof UnexpectedResponseError && error.text.trim() !== '' ? error.text : null;
    throw new MaybeCreatedError(error, request.name, await lookForOrphans(client, request.name, began, now, existing), answer, undefined, interrupted);
  }
}

/** Stopped before a create was tried again, when no attempt so far can have made a key. */
function noKeyMade(name: string, reason: WaitEvent['reason'], signal: NodeJS.Signals): InterruptedError {
  return new InterruptedError([`Stopped before the create was tried again: ${whyNothingYet(reason)}, so no key named '${clip(name, 200)}' was made. Nothing was changed.`], signal);
}

function mayHaveCreated(error: unknown): boolean {
  return (
    (error instanceof NetworkError && error.mayHaveReachedServer) ||
    (error instanceof ApiError && error.status >= 500) ||
    error instanceof UnexpectedResponseError
  );
}

/**
 * "Since the request began" is read on the server's clock. Its Date header
 * has whole seconds, so a clock within 2 s of ours is taken to be ours
 * (allowing for ordinary skew); a farther one is estimated from the
 * client's reading of it, with room for its rounding.
 */
function serverSince(beganMs: number, serverNowMs: number, localNow: number): number {
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

export type OrphanLookup =
  | { state: 'found'; keys: (KeyView & { id: string; createdAt: number })[] }
  | {
      state: 'none';
      /** Keys of that name whose creation time svc cannot read: any of them may be the one. */
      undated: (KeyView & { id: string })[];
      /** Keys whose name svc cannot read at all. */
      unnamed: number;
      /** Why the list may lack keys the server has, when it may. */
      incomplete: string | null;
    }
  | { state: 'failed'; message: string };

async function lookForOrphans(client: ApiClient, name: string, beganMs: number, now: () => number, existing: readonly string[]): Promise<OrphanLookup> {
  try {
    // One look, each page once: after a failed create, minutes of backoff would help nobody.
    const list = await client.listAllKeys({ maxRetries: 0 });
    const since = floorTo(serverSince(beganMs, list.nowMs, now()), timeUnitMs(list.keys));
    const named = list.keys.filter((k): k is KeyView & { id: string } => k.name === name && k.id !== null && !existing.includes(k.id));
    const keys = named.filter((k): k is KeyView & { id: string; createdAt: number } => k.createdAt !== null && k.createdAt >= since);
    if (keys.length > 0) return { state: 'found', keys };
    return {
      state: 'none',
      undated: named.filter((k) => k.createdAt === null),
      unnamed: list.keys.filter((k) => k.name === null).length,
      incomplete: list.incomplete,
    };
  } catch (error) {
    return { state: 'failed', message: (error as Error).message };
  }
}

/**
 * A create whose outcome is unknown (docs/contract.md §C4): the request may
 * have made a key whose secret nobody saw. Carries what the look for such
 * keys found, which of them were revoked since, and the answer's raw text
 * when it could not be read (it may hold the secret); the report puts the
 * cause first and prints that text on stdout.
 */
export class MaybeCreatedError extends CliError {
  constructor(
    readonly cause: unknown,
    readonly keyName: string,
    readonly lookup: OrphanLookup,
    readonly answer: string | null,
    readonly revoked: ReadonlySet<string> = new Set(),
    /** The signal that came while the request was out: the command ends with its code (SIGINT 130, SIGTERM 143). */
    readonly interrupted: NodeJS.Signals | null = null,
    /**
     * The person was shown the cause, what was found and the answer (on a
     * terminal, before being asked whether to revoke): what is left to say
     * is what became of each key.
     */
    readonly told = false,
  ) {
    super(told ? outcome(lookup, revoked) : findings(keyName, lookup, revoked), interrupted === null ? ExitCode.failure : signalExitCode(interrupted), undefined, interrupted);
    this.name = 'MaybeCreatedError';
  }

  /** The same failure once it was explained and some of its keys (maybe none) were revoked. */
  settled(revoked: ReadonlySet<string>): MaybeCreatedError {
    return new MaybeCreatedError(this.cause, this.keyName, this.lookup, null, revoked, this.interrupted, true);
  }
}

/** What became of the keys a failed create made, once the person was told about them. */
function outcome(lookup: OrphanLookup, revoked: ReadonlySet<string>): string[] {
  const keys = lookup.state === 'found' ? lookup.keys : [];
  const fate = (id: string) => (revoked.has(id) ? 'is revoked now' : `was left as it is (${revokeCommand(id)} revokes it)`);
  if (keys.length === 1) return [`The create failed: ${clip(keys[0]!.id, 200)}, the key it made, ${fate(keys[0]!.id)}.`];
  return ['The create failed; the keys it made:', ...keys.map((key) => `  ${clip(key.id, 200)} ${fate(key.id)}`)];
}

function findings(name: string, lookup: OrphanLookup, revoked: ReadonlySet<string>): string[] {
  if (lookup.state === 'failed') return [`svc could not look for it (${clip(lookup.message, 200)}): run \`svc keys list\` before you try again.`];
  const quoted = `'${clip(name, 200)}'`;
  if (lookup.state === 'none') {
    // Not finding it proves little: a server may commit a create after answering, or list it later.
    const lines = [
      `No key named ${quoted} made since the request began is in the list yet. It may not have been made, or the server may still be creating it:`,
      `check \`svc keys list --name ${shellWord(name)}\` in a minute before you try again.`,
    ];
    if (lookup.undated.length > 0) {
      const one = lookup.undated.length === 1;
      lines.push(`${one ? 'A key' : `${lookup.undated.length} keys`} named ${quoted} ${one ? 'shows' : 'show'} no creation time svc can read; ${one ? 'it' : 'any of them'} may be the one:`);
      lines.push(...lookup.undated.map((key) => `  ${clip(key.id, 200)}  ${revokeCommand(key.id)}`));
    }
    if (lookup.unnamed > 0) lines.push(`${lookup.unnamed === 1 ? 'A key shows' : `${lookup.unnamed} keys show`} no name svc can read, so svc could not tell whether one of them is it.`);
    if (lookup.incomplete !== null) lines.push(`The list may lack keys: ${clip(lookup.incomplete, 200)}.`);
    return lines;
  }
  const one = lookup.keys.length === 1;
  return [
    `It did take effect: ${one ? 'a key' : `${lookup.keys.length} keys`} named ${quoted} appeared since the request began, and no one has seen ${one ? 'its secret' : 'their secrets'}.`,
    ...lookup.keys.map((key) => {
      const created = new Date(key.createdAt).toISOString();
      return revoked.has(key.id) ? `  ${clip(key.id, 200)}  created ${created}  revoked now` : `  ${clip(key.id, 200)}  created ${created}  revoke it: ${revokeCommand(key.id)}`;
    }),
  ];
}
