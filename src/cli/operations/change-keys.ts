/**
 * The one engine for changes to keys: revoke, enable and disable, for
 * `keys revoke|enable|disable|prune`, the manager and the orphans of a
 * lost create. It takes what the change is for (arguments a person typed,
 * or keys read from a list), makes the requests one key at a time and
 * returns one result per argument; it prints nothing and asks nothing
 * (views/key-changes.ts words it).
 *
 * A person's argument is an id, or, once the server answered 404 to it,
 * the name of exactly one key (docs/contract.md §C2). A key read from a list
 * is acted on by its id alone. Under Ctrl-C, SIGTERM or SIGHUP (a cancelled
 * CI job) the first signal lets the key in hand finish and stops before the
 * next, so that every change that landed is told and none is left unknown;
 * a second stops at once (stoppedMidChange). While the key in hand waits to
 * be tried again after attempts that did nothing (a 429, a connection that
 * never reached the server), there is nothing to finish: a signal then
 * stops at once with that key not tried.
 */
import { PROBE, type ApiClient, type KeyList, type RequestPhase } from '../../client/api.js';
import { ApiError } from '../../client/errors.js';
import { readKey, type KeyView } from '../../client/key-view.js';
import { isKeyInUse, isNotFound, listedFor } from '../domain/keys.js';
import { InterruptedError, StoppedBeforeRetryError } from '../errors/errors.js';
import { revokeLockedOut, stoppedMidChange } from '../errors/key-changes.js';
import { answerThroughInterrupt } from '../terminal/answer-through-interrupt.js';
import type { KeysContext } from './context.js';
import type { NamedKey } from '../domain/keys.js';
import { keysByName, type ByName } from './keys.js';

export type KeyChange = 'revoke' | 'enable' | 'disable';

/** The change as a past participle, as messages say it. */
export const CHANGED: Record<KeyChange, string> = { revoke: 'revoked', enable: 'enabled', disable: 'disabled' };

export interface ChangeRequest {
  change: KeyChange;
  /**
   * What to change: arguments as a person typed them (`args`), read as ids
   * and then as names, or keys svc read from a list (`keys`), by id alone.
   */
  targets: { args: readonly string[] } | { keys: readonly { id: string; name: string | null }[] };
  /** Go on after a key whose change failed (prune, orphans); otherwise the keys after it are not tried. */
  keepGoing?: boolean;
  /** The list a pick or a question showed: a key in it was there to change. */
  list?: KeyList | null;
  /**
   * A key already gone is what was wanted (--if-exists, prune). Otherwise
   * it is not found, and the keys a person's argument may have meant are
   * read for the report to suggest.
   */
  goneIsDone?: boolean;
}

/**
 * What a change did to one key: `revoked` with the server's answer, or
 * `switched` with the key's record and whether the answer said it changed
 * just now (a 204 says only that it is in that state now, docs/contract.md §C3).
 */
export type Changed = { kind: 'revoked'; answer: unknown } | { kind: 'switched'; document: unknown; view: KeyView; changed: boolean };

/** Why a revoke whose answer was lost, and whose retry found no key of that id, is not told as done. */
export type Doubt = { named: string[] } | { unread: string } | { listUnreadable: true };

/** What became of one argument. */
export type KeyResult =
  | { state: 'done'; arg: string; id: string; name: string | null; changed: Changed }
  /** A revoke whose answer was lost and whose retry found no such key: either it took effect, or no key had this id. */
  | { state: 'lost'; arg: string; id: string }
  /** The same, where the argument may also be a key's name: which key the person meant, svc cannot say. */
  | { state: 'doubt'; arg: string; id: string; doubt: Doubt }
  /** No key has this id now. */
  | { state: 'gone'; arg: string; id: string }
  | { state: 'failed'; arg: string; id: string; error: unknown }
  /** A name several keys share: it names none of them. */
  | { state: 'shared'; arg: string; keys: NamedKey[] }
  /** Not looked up as a name: the list could not be read whole (`ChangeResult.list.incomplete` says why). */
  | { state: 'unread'; arg: string }
  /** Known as no key's id; a stop came before it was looked up as a name. */
  | { state: 'unnamed'; arg: string }
  /** After a failure, or a stop. */
  | { state: 'not-tried'; arg: string };

export type Landed = Extract<KeyResult, { state: 'done' | 'gone' }>;

export interface ChangeEvents {
  /** Each key as its change lands, before the next is tried: so that a run stopped partway has told every key it changed. */
  landed?(result: Landed): void;
  /** The first signal: svc finishes the change of `inHand` and stops before the next. */
  stopping?(inHand: string, signal: NodeJS.Signals): void;
}

export interface ChangeResult {
  results: KeyResult[];
  /** The signal the run stopped for; null when nothing stopped it. */
  stoppedBy: NodeJS.Signals | null;
  /** The list the names were read from, else the one the request gave. */
  list: KeyList | null;
  /** The keys a gone argument may have meant: none for a key read from a list; null when they could not be read. */
  among: readonly KeyView[] | null;
}

/** How the run is watched from the signal handling: told of each key as it is tried, and asked between two keys whether to stop. */
interface Watch {
  stopRequested: () => NodeJS.Signals | null;
  onPhase: (phase: RequestPhase) => void;
  onStart: (id: string) => void;
  onOutcome: (outcome: Outcome, name: string | null) => void;
}

type Outcome = { id: string; state: 'done'; changed: Changed; goneOnRetry: boolean } | { id: string; state: 'gone' } | { id: string; state: 'failed'; error: unknown };

interface Run {
  outcomes: Outcome[];
  notTried: string[];
  stoppedBy: NodeJS.Signals | null;
}

export async function changeKeys(ctx: KeysContext, request: ChangeRequest, events: ChangeEvents = {}): Promise<ChangeResult> {
  const { client } = ctx;
  const act = actFor(client, request.change);
  const last = inUseLast(client, request);
  const listed = 'keys' in request.targets ? last(request.targets.keys, (k) => k.id) : null;
  const args = 'args' in request.targets ? last(request.targets.args, (arg) => arg) : [];
  const known = new Map<string, string | null>([...(request.list?.keys ?? []), ...(listed ?? [])].flatMap((k) => (k.id === null ? [] : [[k.id, k.name]])));
  // A lost answer whose retry found no key was done if svc saw the key a moment ago; otherwise it waits for the end, where svc may read the list to tell.
  const tellsAtOnce = (o: Outcome, names: ReadonlyMap<string, string | null>) => o.state === 'gone' || (o.state === 'done' && (!o.goneOnRetry || names.has(o.id)));
  const landed: string[] = [];
  let byNameList: KeyList | null = null;
  const tell = (o: Outcome, name: string | null) => {
    if (o.state === 'done') landed.push(o.id);
    const names = byNameList === null ? known : new Map([...known, ...byNameList.keys.flatMap((k) => (k.id === null ? [] : [[k.id, k.name] as const]))]);
    if (o.state === 'done' && tellsAtOnce(o, names)) events.landed?.({ state: 'done', arg: o.id, id: o.id, name: name ?? names.get(o.id) ?? null, changed: o.changed });
    else if (o.state === 'gone') events.landed?.({ state: 'gone', arg: o.id, id: o.id });
  };

  let requested: NodeJS.Signals | null = null;
  let inHand: string | null = null;
  let phase: RequestPhase = { state: 'out' };
  const nothingToFinish = () => phase.state === 'waiting' && !phase.afterLostAnswer;
  const watch: Watch = {
    stopRequested: () => requested,
    onStart: (id) => {
      inHand = id;
      phase = { state: 'out' };
    },
    onPhase: (next) => {
      phase = next;
      if (requested !== null && nothingToFinish()) throw new StoppedBeforeRetryError(requested);
    },
    onOutcome: tell,
  };
  const run = await answerThroughInterrupt(
    ctx.onSignal,
    (signal) => {
      requested = signal;
      // The wait itself stops at once then (waitWithCountdown).
      if (inHand !== null && !nothingToFinish()) events.stopping?.(inHand, signal);
    },
    (signal) => stoppedMidChange(signal, CHANGED[request.change], inHand, landed),
    async () => {
      if (listed !== null) return { ...(await eachKey(listed.map((k) => k.id), act, request.keepGoing === true, watch)), byName: null, unnamed: [] };
      return eachKeyOrName(client, args, act, watch, (list) => (byNameList = list));
    },
  );

  const list = run.byName?.list ?? request.list ?? null;
  const names = new Map([...known, ...(run.byName?.list.keys ?? []).flatMap((k) => (k.id === null ? [] : [[k.id, k.name] as const]))]);
  const argOf = new Map([...(run.byName?.ids ?? [])].map(([arg, id]) => [id, arg]));
  const lostIds = run.outcomes.flatMap((o) => (o.state === 'done' && o.goneOnRetry && !names.has(o.id) ? [o.id] : []));
  const doubts = await doubtsOf(client, lostIds);
  const goneIds = run.outcomes.flatMap((o) => (o.state === 'gone' ? [o.id] : []));
  const suggests = !request.goneIsDone && goneIds.length > 0 && !run.outcomes.some((o) => o.state === 'failed');
  const among = !suggests || listed !== null ? [] : (run.byName?.list.keys ?? (await keysToSuggest(client)));

  const results: KeyResult[] = run.outcomes.map((o): KeyResult => {
    const arg = argOf.get(o.id) ?? o.id;
    if (o.state === 'failed') return { state: 'failed', arg, id: o.id, error: o.error };
    if (o.state === 'gone') return { state: 'gone', arg, id: o.id };
    if (o.goneOnRetry && !names.has(o.id)) {
      const doubt = doubts.get(o.id);
      return doubt === undefined ? { state: 'lost', arg, id: o.id } : { state: 'doubt', arg, id: o.id, doubt };
    }
    return { state: 'done', arg, id: o.id, name: names.get(o.id) ?? null, changed: o.changed };
  });
  for (const [arg, keys] of run.byName?.shared ?? []) results.push({ state: 'shared', arg, keys });
  for (const arg of run.byName?.unsure ?? []) results.push({ state: 'unread', arg });
  for (const arg of run.unnamed) results.push({ state: 'unnamed', arg });
  for (const arg of run.notTried) results.push({ state: 'not-tried', arg });
  return { results, stoppedBy: run.stoppedBy, list, among };
}

/**
 * Revoked or disabled first, the key svc is using would answer 401 to every
 * change after it: where the list the request was read from tells which
 * one it is, it goes last.
 */
function inUseLast(client: ApiClient, { change, list }: ChangeRequest): <T>(targets: readonly T[], idOf: (target: T) => string) => readonly T[] {
  if (change === 'enable' || !list) return (targets) => targets;
  const listed = listedFor(list.keys, list.nowMs, client.keyHint);
  const inUse = new Set(list.keys.flatMap((k) => (k.id !== null && isKeyInUse(k, client.keyHint, listed) === true ? [k.id] : [])));
  return (targets, idOf) => [...targets.filter((t) => !inUse.has(idOf(t))), ...targets.filter((t) => inUse.has(idOf(t)))];
}

function actFor(client: ApiClient, change: KeyChange): (id: string, onPhase: (phase: RequestPhase) => void) => Promise<{ changed: Changed; goneOnRetry: boolean }> {
  if (change === 'revoke') {
    return async (id, onPhase) => {
      try {
        const { answer, goneOnRetry } = await client.revokeKey(id, { onPhase });
        return { changed: { kind: 'revoked', answer }, goneOnRetry };
      } catch (error) {
        if (error instanceof ApiError && error.status === 401 && error.afterLostAnswer) throw revokeLockedOut(id, client.keyHint);
        throw error;
      }
    };
  }
  const enabled = change === 'enable';
  return async (id, onPhase) => {
    const answer = await client.setEnabled(id, enabled, { onPhase });
    // The change has landed: the read of its record is out as a request whose outcome matters.
    onPhase({ state: 'out' });
    let document = answer.document;
    try {
      // --json owes a document, so a 204's record is read.
      document ??= (await client.getKey(id)).document;
    } catch (error) {
      // A stop in the wait before that read was tried again is no stop before the change: the change was made.
      throw error instanceof StoppedBeforeRetryError ? new InterruptedError(undefined, error.signal) : error;
    }
    return { changed: { kind: 'switched', document, view: readKey(document), changed: answer.changed }, goneOnRetry: false };
  };
}

/**
 * Acts on each id in turn. A key that is not there is `gone` and the others
 * are still tried; any other failure is `failed` and, unless `keepGoing`,
 * ends the run: the ids after it come back as not tried, so nothing is
 * reported done that was not. A stop asked for between two keys ends it the
 * same way.
 */
async function eachKey(
  ids: readonly string[],
  act: ReturnType<typeof actFor>,
  keepGoing: boolean,
  watch: Watch,
  nameOf: (id: string) => string | null = () => null,
): Promise<Run> {
  const outcomes: Outcome[] = [];
  const settle = (outcome: Outcome) => {
    outcomes.push(outcome);
    watch.onOutcome(outcome, nameOf(outcome.id));
  };
  for (const [index, id] of ids.entries()) {
    const stoppedBy = index > 0 ? watch.stopRequested() : null;
    if (stoppedBy) return { outcomes, notTried: ids.slice(index), stoppedBy };
    watch.onStart(id);
    try {
      settle({ id, state: 'done', ...(await act(id, watch.onPhase)) });
    } catch (error) {
      if (error instanceof StoppedBeforeRetryError) return { outcomes, notTried: ids.slice(index), stoppedBy: error.signal };
      if (isNotFound(error)) {
        settle({ id, state: 'gone' });
        continue;
      }
      settle({ id, state: 'failed', error });
      if (!keepGoing) return { outcomes, notTried: ids.slice(index + 1), stoppedBy: null };
    }
  }
  // A stop asked for while the last key was in hand: nothing was left to skip, but the run was stopped all the same.
  return { outcomes, notTried: [], stoppedBy: ids.length > 0 ? watch.stopRequested() : null };
}

/**
 * eachKey on the arguments as ids, stopping at a failure; then, unless one
 * stopped it, those the server did not know are read as names (keysByName)
 * and the keys that each names alone are acted on in turn. A name several
 * keys share is left in `byName.shared`, neither done nor gone. A stop
 * before the names were read leaves those arguments in `unnamed`.
 */
async function eachKeyOrName(
  client: ApiClient,
  args: readonly string[],
  act: ReturnType<typeof actFor>,
  watch: Watch,
  onNames: (list: KeyList) => void,
): Promise<Run & { byName: ByName | null; unnamed: string[] }> {
  // A gone id is told only once it is known not to be a name either.
  const first = await eachKey(args, act, false, { ...watch, onOutcome: (o, name) => o.state !== 'gone' && watch.onOutcome(o, name) });
  const gone = first.outcomes.flatMap((o) => (o.state === 'gone' ? [o.id] : []));
  if (gone.length === 0 || first.outcomes.some((o) => o.state === 'failed')) return { ...first, byName: null, unnamed: [] };
  const stoppedBeforeNames = (stoppedBy: NodeJS.Signals) => ({
    outcomes: first.outcomes.filter((o) => o.state !== 'gone'),
    notTried: first.notTried,
    stoppedBy,
    byName: null,
    unnamed: gone,
  });
  const stoppedBy = first.stoppedBy ?? watch.stopRequested();
  if (stoppedBy) return stoppedBeforeNames(stoppedBy);
  let byName: ByName;
  try {
    byName = await keysByName(client, gone);
  } catch (error) {
    if (error instanceof StoppedBeforeRetryError) return stoppedBeforeNames(error.signal);
    throw error;
  }
  onNames(byName.list);
  const named = (id: string) => byName.ids.has(id) || byName.shared.has(id) || byName.unsure.includes(id);
  for (const o of first.outcomes) if (o.state === 'gone' && !named(o.id)) watch.onOutcome(o, null);
  const argOf = new Map([...byName.ids].map(([arg, id]) => [id, arg]));
  const second = await eachKey([...byName.ids.values()], act, false, watch, (id) => argOf.get(id) ?? null);
  return {
    outcomes: [...first.outcomes.filter((o) => o.state !== 'gone' || !named(o.id)), ...second.outcomes],
    notTried: second.notTried,
    // Asked for while the names were read, with nothing after it to skip.
    stoppedBy: second.stoppedBy ?? watch.stopRequested(),
    byName,
    unnamed: [],
  };
}

/**
 * An argument whose revoke lost its answer, and whose retry found no key of
 * that id, is gone as an id; but it may have been meant as a name, which
 * svc reads only after a plain 404 (an id always wins). If some key has it
 * for its name, or the list cannot be read whole to tell, svc cannot say
 * which key the person meant, nor whether the first revoke did anything.
 */
async function doubtsOf(client: ApiClient, ids: readonly string[]): Promise<Map<string, Doubt>> {
  const doubts = new Map<string, Doubt>();
  if (ids.length === 0) return doubts;
  let byName: ByName;
  try {
    byName = await keysByName(client, ids);
  } catch (error) {
    if (error instanceof InterruptedError) throw error;
    for (const id of ids) doubts.set(id, { listUnreadable: true });
    return doubts;
  }
  for (const id of ids) {
    const named = byName.ids.get(id);
    const namedIds = named === undefined ? byName.shared.get(id)?.map((k) => k.id) : [named];
    if (namedIds !== undefined) doubts.set(id, { named: namedIds });
    else if (byName.unsure.includes(id)) doubts.set(id, { unread: byName.list.incomplete ?? '' });
  }
  return doubts;
}

/** One look at the list (one attempt, no waiting): it only adds a hint to a failure, so a list that cannot be read adds none. */
async function keysToSuggest(client: ApiClient): Promise<readonly KeyView[] | null> {
  try {
    return (await client.listAllKeys(PROBE)).keys;
  } catch (error) {
    if (error instanceof InterruptedError) throw error;
    return null;
  }
}
