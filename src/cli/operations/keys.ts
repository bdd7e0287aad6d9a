/**
 * The key operations: each makes its requests and returns what happened.
 * None prints or asks; commands and the interactive manager decide what a
 * person sees.
 */
import { PROBE, type ApiClient, type KeyList, type RequestPhase } from '../../client/api.js';
import { ApiError } from '../../client/errors.js';
import { readKey, type KeyView } from '../../client/key-view.js';
import { CliError, ExitCode, InterruptedError, StoppedBeforeRetryError } from '../errors/errors.js';
import { matchesFilter, matchesPrune, unjudgedByFilter, unjudgedByPrune, type ListFilter, type PruneCriteria, type Unjudged } from '../domain/key-filters.js';
import { isKeyInUse, isNotFound, keyNotFound, listedFor, namedExactly, resolveKeyArgument, sharedName } from '../domain/keys.js';
import { clip, shellWord } from '../text/text.js';
import { nearest } from '../domain/suggest.js';

export interface KeyRecord {
  /** The server's document as it came: what --json prints. */
  document: unknown;
  view: KeyView;
}

/** Every key, those that match `filter` (all when it is empty), and how many keys a filter could not judge. */
export async function listKeys(
  client: ApiClient,
  filter: ListFilter,
  /** Told each page's matching keys as the page comes, so they can be shown while the next is read. */
  onMatching?: (records: KeyRecord[], nowMs: number) => void,
): Promise<{ list: KeyList; matching: KeyRecord[]; unjudged: Unjudged[] }> {
  const filtered = Object.values(filter).some((value) => value !== undefined);
  const matching: KeyRecord[] = [];
  const list = await client.listAllKeys({
    onPage: (page) => {
      const records = page.documents.map((document, i) => ({ document, view: page.keys[i]! }));
      const matched = filtered ? records.filter(({ view }) => matchesFilter(view, filter, page.nowMs)) : records;
      for (const record of matched) matching.push(record);
      onMatching?.(matched, page.nowMs);
    },
  });
  return { list, matching, unjudged: unjudgedByFilter(list.keys, filter, list.nowMs) };
}

/**
 * One key (docs/contract.md §C8): from GET /user/api-keys/{id}, or the list where the server has no such endpoint.
 * `command` (`view`, `rotate`) is what a "no such key" suggests running with the right id.
 */
export async function viewKey(client: ApiClient, id: string, command = 'view'): Promise<KeyRecord> {
  try {
    return await client.getKey(id);
  } catch (error) {
    throw isNotFound(error) ? await keyNotFoundAmong(client, [id], command) : error;
  }
}

/** Keys whose id or name `id` most likely misspells; none when too many are as near to mean anything. */
const MOST_SUGGESTED = 3;

type NamedKey = KeyView & { id: string };

/**
 * The failure for ids the server answered 404 (exit 4), each with the keys
 * it most likely meant: a near miss (a typo in an id or a name) gets the
 * nearest keys and the command to run (`svc keys <command> <id>`). The
 * keys are those given, else from one look at the list (one attempt, no
 * waiting: it only adds a hint to a failure, so a list that cannot be read
 * adds none).
 */
export async function keyNotFoundAmong(client: ApiClient, ids: readonly string[], command: string, given?: readonly KeyView[]): Promise<CliError> {
  let keys: NamedKey[];
  try {
    keys = (given ?? (await client.listAllKeys(PROBE)).keys).filter((k): k is NamedKey => k.id !== null);
  } catch (error) {
    if (error instanceof InterruptedError) throw error;
    return keyNotFound(ids.join(', '));
  }
  const lines = ids.map((id) => {
    const near = nearest(id, keys.map((k) => (k.name === null ? [k.id] : [k.id, k.name])));
    if (near.length === 0 || near.length > MOST_SUGGESTED) return keyNotFound(id).lines[0]!;
    const byId = new Map(keys.map((k) => [k.id, k]));
    const meant = near.map((found) => `${clip(found, 200)}${byId.get(found)?.name ? ` ('${clip(byId.get(found)!.name!, 200)}')` : ''}`);
    return `${keyNotFound(id).lines[0]!.replace(/\.$/, '')}. Did you mean ${meant.join(' or ')} (\`svc keys ${command} ${shellWord(near[0]!)}\`)?`;
  });
  return new CliError(lines, ExitCode.notFound);
}

/** Arguments the server did not know as ids, read as names against the whole list. */
export interface ByName {
  /** Each argument that is the trimmed name of exactly one key, with that key's id. */
  ids: Map<string, string>;
  /** Each argument that several keys are named, with those keys. */
  shared: Map<string, NamedKey[]>;
  /**
   * Arguments left unresolved because the list was not read whole: a name that one key read has may be another's
   * on a page svc could not read, so it names nothing svc acts on.
   */
  unsure: string[];
  list: KeyList;
}

/**
 * Names for keys (docs/contract.md §C2): asked only once the server has
 * answered 404 to an argument as an id, so an id always wins and naming a
 * key by id costs no extra request; then every page of the list is read,
 * since a name on a later page names its key as well as one on the first.
 */
export async function keysByName(client: ApiClient, args: readonly string[]): Promise<ByName> {
  return namedIn(await client.listAllKeys(), args);
}

/** The same, against a list already read (one a confirmation shows): an argument that is an id in it stays as it is. */
export function namedIn(list: KeyList, args: readonly string[]): ByName {
  const found: ByName = { ids: new Map(), shared: new Map(), unsure: [], list };
  for (const arg of args) {
    if (list.incomplete !== null && !list.keys.some((k) => k.id === arg)) {
      found.unsure.push(arg);
      continue;
    }
    const named = resolveKeyArgument(list.keys, arg);
    if (named.kind === 'name') found.ids.set(arg, named.key.id);
    if (named.kind === 'ambiguous') found.shared.set(arg, named.keys);
  }
  return found;
}

/**
 * Every key named exactly `name`, for `keys revoke --name`: read from the
 * whole list or not at all. A list read in part may hide more keys of that
 * name, so it is refused as namedIn refuses a name (exit 1, nothing done).
 */
export async function keysNamed(client: ApiClient, name: string): Promise<{ list: KeyList; keys: NamedKey[] }> {
  const list = await client.listAllKeys();
  if (list.incomplete !== null) throw await unresolved(client, [], { ids: new Map(), shared: new Map(), unsure: [name], list }, 'revoke');
  return { list, keys: namedExactly(list.keys, name) };
}

/**
 * What is left of arguments that named no key to act on: the names several
 * keys share, listed (exit 2, as a usage error: the person must choose),
 * then those that name nothing, with the nearest keys (exit 4).
 */
export async function unresolved(client: ApiClient, missing: readonly string[], byName: ByName | null, command: string): Promise<CliError> {
  if (byName !== null && byName.unsure.length > 0) {
    return new CliError(
      [
        `svc could not read the whole key list (${byName.list.incomplete}), so it acts on no key by name: ${byName.unsure.map((arg) => `'${clip(arg, 200)}'`).join(', ')} may name a key it did not see.`,
        'Give the id instead (`svc keys list` shows the keys it can read).',
      ],
      ExitCode.failure,
    );
  }
  const shared = byName === null ? [] : [...byName.shared].flatMap(([name, keys]) => sharedName(name, keys, byName.list.nowMs));
  const notFound = missing.length === 0 ? [] : (await keyNotFoundAmong(client, missing, command, byName?.list.keys)).lines;
  return new CliError([...shared, ...notFound], shared.length > 0 ? ExitCode.usage : ExitCode.notFound);
}

/**
 * One key by id, or by the name of exactly one key when the server knows no
 * such id (docs/contract.md §C2), with the id it was found by; a name
 * several keys share is exit 2, nothing by that id or name exit 4.
 */
export async function viewKeyOrNamed(client: ApiClient, arg: string, command = 'view'): Promise<KeyRecord & { id: string }> {
  try {
    return { ...(await client.getKey(arg)), id: arg };
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  const byName = await keysByName(client, [arg]);
  const id = byName.ids.get(arg);
  if (id !== undefined) return { ...(await viewKey(client, id, command)), id };
  throw await unresolved(client, byName.shared.has(arg) ? [] : [arg], byName, command);
}

export interface Switched extends KeyRecord {
  /**
   * True when the server answered with the changed record (200), or with a
   * 204 to a retry whose first attempt may have made the change. A 204
   * otherwise says only that the key is in that state now: the reference
   * server means "already", other servers answer every change so.
   */
  changed: boolean;
}

/** One PATCH. --json owes a document, so a 204's record is read. */
export async function setEnabled(client: ApiClient, id: string, enabled: boolean): Promise<Switched> {
  try {
    return await switchOne(client, id, enabled);
  } catch (error) {
    throw isNotFound(error) ? keyNotFound(id) : error;
  }
}

async function switchOne(client: ApiClient, id: string, enabled: boolean, onPhase?: (phase: RequestPhase) => void): Promise<Switched> {
  const answer = await client.setEnabled(id, enabled, { onPhase });
  // The change has landed: the read of its record is out as a request whose outcome matters.
  onPhase?.({ state: 'out' });
  let document = answer.document;
  try {
    document ??= (await client.getKey(id)).document;
  } catch (error) {
    // A stop in the wait before that read was tried again is no stop before the change: the change was made.
    throw error instanceof StoppedBeforeRetryError ? new InterruptedError(undefined, error.signal) : error;
  }
  return { document, view: readKey(document), changed: answer.changed };
}

/** What became of one id of several: done (with the answer), already gone, or failed. */
export type KeyOutcome<T> = { id: string; state: 'done'; value: T } | { id: string; state: 'gone' } | { id: string; state: 'failed'; error: unknown };

/**
 * How a run over several keys is watched from outside (a command's signal
 * handling, its progress lines): told of each key as it is tried and as it
 * lands, and asked between two keys whether to stop.
 */
export interface KeyRunWatch<T> {
  /**
   * The signal that asked the run to stop, asked before each key but the
   * first; null to go on. Given, a stop in the wait before the key in hand
   * was tried again, when none of its attempts did anything
   * (StoppedBeforeRetryError), ends the run there too, with that key not tried.
   */
  stopRequested?: () => NodeJS.Signals | null;
  /** The key in hand's request, as each attempt goes out and each wait between attempts begins; what it throws ends the request. */
  onPhase?: (phase: RequestPhase) => void;
  /** The key about to be tried. */
  onStart?: (id: string) => void;
  /** Each key's outcome as it comes, before the next is tried; `name` when the argument that found it was its name. */
  onOutcome?: (outcome: KeyOutcome<T>, name: string | null) => void;
}

export interface KeysRun<T> {
  outcomes: KeyOutcome<T>[];
  notTried: string[];
  /** The signal the run stopped for, leaving `notTried`; null when nothing stopped it. */
  stoppedBy: NodeJS.Signals | null;
}

/**
 * Acts on each id in turn. A key that is not there is `gone` and the others
 * are still tried; any other failure is `failed` and, unless `keepGoing`,
 * ends the run: the ids after it come back as not tried, so nothing is
 * reported done that was not. A stop asked for between two keys ends it the
 * same way.
 */
async function eachKey<T>(
  ids: readonly string[],
  act: (id: string, onPhase?: (phase: RequestPhase) => void) => Promise<T>,
  keepGoing: boolean,
  watch: KeyRunWatch<T> = {},
  nameOf: (id: string) => string | null = () => null,
): Promise<KeysRun<T>> {
  const outcomes: KeyOutcome<T>[] = [];
  const settle = (outcome: KeyOutcome<T>) => {
    outcomes.push(outcome);
    watch.onOutcome?.(outcome, nameOf(outcome.id));
  };
  for (const [index, id] of ids.entries()) {
    const stoppedBy = index > 0 ? (watch.stopRequested?.() ?? null) : null;
    if (stoppedBy) return { outcomes, notTried: ids.slice(index), stoppedBy };
    watch.onStart?.(id);
    try {
      settle({ id, state: 'done', value: await act(id, watch.onPhase) });
    } catch (error) {
      if (error instanceof StoppedBeforeRetryError && watch.stopRequested) return { outcomes, notTried: ids.slice(index), stoppedBy: error.signal };
      if (isNotFound(error)) {
        settle({ id, state: 'gone' });
        continue;
      }
      settle({ id, state: 'failed', error });
      if (!keepGoing) return { outcomes, notTried: ids.slice(index + 1), stoppedBy: null };
    }
  }
  // A stop asked for while the last key was in hand: nothing was left to skip, but the run was stopped all the same.
  return { outcomes, notTried: [], stoppedBy: ids.length > 0 ? (watch.stopRequested?.() ?? null) : null };
}

export interface KeysActedOn<T> extends KeysRun<T> {
  /** What the arguments the server did not know as ids name, when there were any and svc got as far as asking. */
  byName: ByName | null;
  /** Arguments the server did not know as ids that a stop left unread as names. */
  unnamed: string[];
}

/**
 * eachKey on the arguments as ids, stopping at a failure; then, unless one stopped it, those
 * the server did not know are read as names (keysByName) and the keys that
 * each names alone are acted on in turn. A name several keys share is left
 * in `byName.shared`, neither done nor gone. A stop before the names were
 * read leaves those arguments in `unnamed`.
 */
async function eachKeyOrName<T>(
  client: ApiClient,
  args: readonly string[],
  act: (id: string, onPhase?: (phase: RequestPhase) => void) => Promise<T>,
  watch: KeyRunWatch<T> = {},
): Promise<KeysActedOn<T>> {
  // A gone id is told only once it is known not to be a name either.
  const first = await eachKey(args, act, false, { ...watch, onOutcome: (o, name) => o.state !== 'gone' && watch.onOutcome?.(o, name) });
  const gone = first.outcomes.flatMap((o) => (o.state === 'gone' ? [o.id] : []));
  if (gone.length === 0 || first.outcomes.some((o) => o.state === 'failed')) return { ...first, byName: null, unnamed: [] };
  const stoppedBeforeNames = (stoppedBy: NodeJS.Signals) => ({ outcomes: first.outcomes.filter((o) => o.state !== 'gone'), notTried: first.notTried, stoppedBy, byName: null, unnamed: gone });
  const stoppedBy = first.stoppedBy ?? watch.stopRequested?.() ?? null;
  if (stoppedBy) return stoppedBeforeNames(stoppedBy);
  let byName: ByName;
  try {
    byName = await keysByName(client, gone);
  } catch (error) {
    if (error instanceof StoppedBeforeRetryError && watch.stopRequested) return stoppedBeforeNames(error.signal);
    throw error;
  }
  const named = (id: string) => byName.ids.has(id) || byName.shared.has(id) || byName.unsure.includes(id);
  for (const o of first.outcomes) if (o.state === 'gone' && !named(o.id)) watch.onOutcome?.(o, null);
  const argOf = new Map([...byName.ids].map(([arg, id]) => [id, arg]));
  const second = await eachKey([...byName.ids.values()], act, false, watch, (id) => argOf.get(id) ?? null);
  return {
    outcomes: [...first.outcomes.filter((o) => o.state !== 'gone' || !named(o.id)), ...second.outcomes],
    notTried: second.notTried,
    // Asked for while the names were read, with nothing after it to skip.
    stoppedBy: second.stoppedBy ?? watch.stopRequested?.() ?? null,
    byName,
    unnamed: [],
  };
}

/**
 * A revoke's answer; `goneOnRetry` when the first attempt's answer was lost and the retry found no key (see
 * ApiClient.revokeKey). Such an outcome is done, never read as a name: the first attempt may have revoked the key.
 */
export type Revoked = Awaited<ReturnType<ApiClient['revokeKey']>>;

/** Revokes each id; the value of each done one is the server's answer. */
export function revokeKeys(client: ApiClient, ids: readonly string[], keepGoing: boolean, watch?: KeyRunWatch<Revoked>): Promise<KeysRun<Revoked>> {
  return eachKey(ids, (id, onPhase) => revokeOne(client, id, onPhase), keepGoing, watch);
}

/**
 * A 401 to the retry of a revoke whose answer was lost: the key svc sends
 * stopped working in between, most likely because the revoke was of that
 * very key and took effect. svc cannot list keys to tell, so it says both
 * what it knows and what it cannot, rather than the generic 401.
 */
async function revokeOne(client: ApiClient, id: string, onPhase?: (phase: RequestPhase) => void): Promise<Revoked> {
  try {
    return await client.revokeKey(id, { onPhase });
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 401 && error.afterLostAnswer)) throw error;
    throw new CliError(
      [
        `The revoke of ${clip(id, 80)} was sent, its answer was lost, and the retry was refused as unauthenticated (401): the key svc uses (${client.keyHint}) stopped working in between.`,
        `If ${clip(id, 80)} is that key, it is revoked. If not, log in with a working key and run \`svc keys revoke ${shellWord(id)} --if-exists\`.`,
      ],
      ExitCode.unauthenticated,
    );
  }
}

/**
 * For keys a person named on the command line (ids, or names): each
 * switched or revoked in turn, names resolved as eachKeyOrName says. Ids that come from a
 * list (prune, the manager, orphans) never go through names.
 */
export function switchNamedKeys(client: ApiClient, args: readonly string[], enabled: boolean, watch?: KeyRunWatch<Switched>): Promise<KeysActedOn<Switched>> {
  return eachKeyOrName(client, args, (id, onPhase) => switchOne(client, id, enabled, onPhase), watch);
}

export function revokeNamedKeys(client: ApiClient, args: readonly string[], watch?: KeyRunWatch<Revoked>): Promise<KeysActedOn<Revoked>> {
  return eachKeyOrName(client, args, (id, onPhase) => revokeOne(client, id, onPhase), watch);
}

export interface PrunePlan {
  list: KeyList;
  targets: KeyRecord[];
  /** Matched, but left alone: the key in use, or one that might be. */
  spared: { record: KeyRecord; reason: 'in-use' | 'unknowable' }[];
  /** Keys a criterion could not judge for want of its field: left alone too. */
  unjudged: Unjudged[];
}

/** The keys prune would revoke (docs/contract.md §C8), never the key in use. */
export async function planPrune(client: ApiClient, criteria: PruneCriteria): Promise<PrunePlan> {
  const list = await client.listAllKeys();
  const plan: PrunePlan = { list, targets: [], spared: [], unjudged: unjudgedByPrune(list.keys, criteria) };
  const listed = listedFor(list.keys, list.nowMs, client.keyHint);
  list.documents.forEach((document, i) => {
    const view = list.keys[i]!;
    if (view.id === null || !matchesPrune(view, criteria, list.nowMs)) return;
    const used = isKeyInUse(view, client.keyHint, listed);
    if (used === false) plan.targets.push({ document, view });
    else plan.spared.push({ record: { document, view }, reason: used ? 'in-use' : 'unknowable' });
  });
  return plan;
}
