/**
 * The key operations: each makes its requests and returns what happened.
 * None prints or asks; commands and the interactive manager decide what a
 * person sees.
 */
import { PROBE, type ApiClient, type KeyList } from '../../client/api.js';
import { ApiError } from '../../client/errors.js';
import { readKey, type KeyView } from '../../client/key-view.js';
import { CliError, ExitCode, InterruptedError } from '../errors.js';
import { matchesFilter, matchesPrune, unjudgedByFilter, unjudgedByPrune, type ListFilter, type PruneCriteria, type Unjudged } from '../key-filters.js';
import { isKeyInUse, isNotFound, keyNotFound } from '../keys.js';
import { clip, shellWord } from '../render/text.js';

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

/**
 * The keys named exactly as each of `ids`, from one look at the list (one
 * attempt, no waiting: it only adds a hint to a failure, so a list that
 * cannot be read adds none).
 */
export async function keysNamed(client: ApiClient, ids: readonly string[]): Promise<Map<string, (KeyView & { id: string })[]>> {
  const named = new Map<string, (KeyView & { id: string })[]>();
  let keys: KeyView[];
  try {
    keys = (await client.listAllKeys(PROBE)).keys;
  } catch (error) {
    if (error instanceof InterruptedError) throw error;
    return named;
  }
  for (const id of ids) {
    const found = keys.filter((k): k is KeyView & { id: string } => k.id !== null && k.name === id);
    if (found.length > 0) named.set(id, found);
  }
  return named;
}

/**
 * The failure for ids the server answered 404 (exit 4). A person often
 * gives a key's name where its id belongs, so an id that is exactly the
 * name of a key is answered with that key's id and the command to run
 * (`svc keys <command> <id>`). The name is not acted on: names are neither
 * unique nor stable (a rotation makes a second key of the same name, and
 * anyone may create one), so the key a name meant yesterday may not be the
 * one it finds today; an id always is.
 */
export async function keyNotFoundAmong(client: ApiClient, ids: readonly string[], command: string): Promise<CliError> {
  const named = await keysNamed(client, ids);
  if (named.size === 0) return keyNotFound(ids.join(', '));
  const lines = ids.map((id) => {
    const keys = named.get(id);
    const given = clip(id, 200);
    if (keys === undefined) return keyNotFound(id).lines[0]!;
    if (keys.length === 1) {
      const found = keys[0]!.id;
      return `No key with id ${given}; a key named '${given}' has id ${clip(found, 200)} (\`svc keys ${command} ${shellWord(found)}\`).`;
    }
    return `No key with id ${given}; ${keys.length} keys are named '${given}': ${keys.map((k) => clip(k.id, 200)).join(', ')}.`;
  });
  return new CliError(lines, ExitCode.notFound);
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

async function switchOne(client: ApiClient, id: string, enabled: boolean): Promise<Switched> {
  const answer = await client.setEnabled(id, enabled);
  const document = answer.document ?? (await client.getKey(id)).document;
  return { document, view: readKey(document), changed: answer.changed };
}

/** What became of one id of several: done (with the answer), already gone, or failed. */
export type KeyOutcome<T> = { id: string; state: 'done'; value: T } | { id: string; state: 'gone' } | { id: string; state: 'failed'; error: unknown };

/**
 * Acts on each id in turn. A key that is not there is `gone` and the others
 * are still tried; any other failure is `failed` and, unless `keepGoing`,
 * ends the run: the ids after it come back as not tried, so nothing is
 * reported done that was not.
 */
async function eachKey<T>(
  ids: readonly string[],
  act: (id: string) => Promise<T>,
  keepGoing: boolean,
): Promise<{ outcomes: KeyOutcome<T>[]; notTried: string[] }> {
  const outcomes: KeyOutcome<T>[] = [];
  for (const [index, id] of ids.entries()) {
    try {
      outcomes.push({ id, state: 'done', value: await act(id) });
    } catch (error) {
      if (isNotFound(error)) {
        outcomes.push({ id, state: 'gone' });
        continue;
      }
      outcomes.push({ id, state: 'failed', error });
      if (!keepGoing) return { outcomes, notTried: ids.slice(index + 1) };
    }
  }
  return { outcomes, notTried: [] };
}

/** Switches each id on or off, as revokeKeys revokes. */
export function switchKeys(client: ApiClient, ids: readonly string[], enabled: boolean): Promise<{ outcomes: KeyOutcome<Switched>[]; notTried: string[] }> {
  return eachKey(ids, (id) => switchOne(client, id, enabled), false);
}

/** Revokes each id; the value of each done one is the server's answer. */
export function revokeKeys(client: ApiClient, ids: readonly string[], keepGoing: boolean): Promise<{ outcomes: KeyOutcome<unknown>[]; notTried: string[] }> {
  return eachKey(ids, (id) => revokeOne(client, id), keepGoing);
}

/**
 * A 401 to the retry of a revoke whose answer was lost: the key svc sends
 * stopped working in between, most likely because the revoke was of that
 * very key and took effect. svc cannot list keys to tell, so it says both
 * what it knows and what it cannot, rather than the generic 401.
 */
async function revokeOne(client: ApiClient, id: string): Promise<unknown> {
  try {
    return await client.revokeKey(id);
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
  list.documents.forEach((document, i) => {
    const view = list.keys[i]!;
    if (view.id === null || !matchesPrune(view, criteria, list.nowMs)) return;
    const used = isKeyInUse(view, client.keyHint);
    if (used === false) plan.targets.push({ document, view });
    else plan.spared.push({ record: { document, view }, reason: used ? 'in-use' : 'unknowable' });
  });
  return plan;
}
