/**
 * The key operations: each makes its requests and returns what happened.
 * None prints or asks; commands and the interactive manager decide what a
 * person sees.
 */
import { PROBE, type ApiClient, type KeyList } from '../../client/api.js';
import type { KeyView } from '../../client/key-view.js';
import { CliError, ExitCode, InterruptedError } from '../errors/errors.js';
import { matchesFilter, matchesPrune, unjudgedByFilter, unjudgedByPrune, type ListFilter, type PruneCriteria, type Unjudged } from '../domain/key-filters.js';
import { isKeyInUse, isNotFound, listedFor, namedExactly, notFoundAmong, refuseNames, resolveKeyArgument, unreadNames, type NamedKey } from '../domain/keys.js';

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
async function viewKey(client: ApiClient, id: string, command = 'view'): Promise<KeyRecord> {
  try {
    return await client.getKey(id);
  } catch (error) {
    throw isNotFound(error) ? await keyNotFoundAmong(client, [id], command) : error;
  }
}

/**
 * The failure for ids the server answered 404 (exit 4), each with the keys
 * it most likely meant (notFoundAmong), from `given` or one look at the
 * list (one attempt, no waiting: it only adds a hint to a failure, so a
 * list that cannot be read adds none).
 */
async function keyNotFoundAmong(client: ApiClient, ids: readonly string[], command: string, given?: readonly KeyView[]): Promise<CliError> {
  let keys: readonly KeyView[] | null;
  try {
    keys = given ?? (await client.listAllKeys(PROBE)).keys;
  } catch (error) {
    if (error instanceof InterruptedError) throw error;
    keys = null;
  }
  return notFoundAmong(ids, keys, command);
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
function namedIn(list: KeyList, args: readonly string[]): ByName {
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
 * The ids `args` name in `list`, for a question that must name the keys it
 * will change (a revoke's, a disable's): a name becomes its key's id; a name
 * several keys share, or one the list could not be read whole for, is
 * refused as `unresolved` says.
 */
export async function idsNamedIn(client: ApiClient, list: KeyList, args: readonly string[], command: string): Promise<string[]> {
  const byName = namedIn(list, args);
  if (byName.shared.size > 0 || byName.unsure.length > 0) throw await unresolved(client, [], byName, command);
  return args.map((arg) => byName.ids.get(arg) ?? arg);
}

/**
 * What is left of arguments that named no key to act on: the names several
 * keys share, listed (exit 2, as a usage error: the person must choose),
 * then those that name nothing, with the nearest keys (exit 4).
 */
export async function unresolved(client: ApiClient, missing: readonly string[], byName: ByName | null, command: string): Promise<CliError> {
  if (byName !== null && byName.unsure.length > 0) return new CliError(unreadNames(byName.list.incomplete ?? '', byName.unsure), ExitCode.failure);
  const notFound = missing.length === 0 ? [] : (await keyNotFoundAmong(client, missing, command, byName?.list.keys)).lines;
  return refuseNames(byName === null ? [] : [...byName.shared], notFound, byName?.list.nowMs ?? 0, command);
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
