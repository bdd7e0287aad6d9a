/**
 * What a person reads of a change to keys (operations/change-keys.ts), for
 * every command and the manager alike: each key as its change lands, then
 * what else became of the arguments, the --json document, and the failure
 * the command ends with.
 */
import { isKeyInUse, notFoundAmong, refuseNames, unreadNames } from '../domain/keys.js';
import { CliError, ExitCode } from '../errors/errors.js';
import { stoppedBetweenKeys } from '../errors/key-changes.js';
import { CHANGED, type Changed, type ChangeEvents, type ChangeRequest, type ChangeResult, type KeyResult } from '../operations/change-keys.js';
import type { KeySession } from '../session/session.js';
import { keyChangeDocument } from './documents.js';
import { shown } from './keys.js';
import { shellWord } from '../text/text.js';
import { keyState, stillDoes } from '../domain/key-state.js';

export interface ChangeViewOptions {
  /** The command a "did you mean" suggests running (`svc keys <command> <id>`). */
  command: string;
  /** `keys prune`: the records of the keys it meant to revoke, and why its list was read in part; --json's document says them (views/documents.ts). */
  prune?: { matched: readonly unknown[]; incomplete: string | null };
}

export interface ChangeView {
  /** For changeKeys: tells each key as it lands. */
  events: ChangeEvents;
  /** Says the rest, prints --json's document and throws the failure to end with, if any. */
  report(result: ChangeResult): void;
}

/** The view of `request`, the same request changeKeys is given. */
export function keyChangeView(session: KeySession, request: ChangeRequest, options: ChangeViewOptions): ChangeView {
  const { render } = session;
  const { change } = request;
  const told = new Set<string>();
  const tellDone = (id: string, name: string | null, changed: Changed) => {
    told.add(id);
    if (changed.kind === 'revoked') render.success(`Revoked ${name ? `'${shown(name)}' (${shown(id)})` : shown(id)}.`);
    else tellSwitched(session, id, change === 'enable', changed);
  };
  const tellGone = (id: string) => {
    told.add(id);
    render.info(`${shown(id)} was already gone.`);
  };
  return {
    events: {
      landed(result) {
        if (result.state === 'done') tellDone(result.id, result.name, result.changed);
        else if (request.goneIsDone) tellGone(result.id);
      },
      stopping(inHand, signal) {
        render.info(`Stopping once ${shown(inHand)} is done (${signal} again to stop at once).`);
      },
    },
    report(result) {
      reportRest(session, request, options, result, told, tellDone, tellGone);
    },
  };
}

function reportRest(
  session: KeySession,
  { change, goneIsDone, keepGoing }: ChangeRequest,
  options: ChangeViewOptions,
  { results, stoppedBy, list, among }: ChangeResult,
  told: ReadonlySet<string>,
  tellDone: (id: string, name: string | null, changed: Changed) => void,
  tellGone: (id: string) => void,
): void {
  const { render } = session;
  const of = <S extends KeyResult['state']>(state: S) => results.filter((r): r is Extract<KeyResult, { state: S }> => r.state === state);
  let failure: unknown;
  for (const result of results) {
    if (result.state === 'lost') {
      // The first DELETE's answer was lost and the retry found nothing: svc cannot say that it revoked a key, only
      // that none has this id now. A key the list showed a moment ago was there for the first DELETE to revoke.
      render.info(`${shown(result.id)} is gone: the answer to its revoke was lost and the retry found no such key, so either that revoke took effect or no key ever had this id.`);
    } else if (result.state === 'done') {
      if (!told.has(result.id)) tellDone(result.id, result.name, result.changed);
    } else if (result.state === 'gone' && goneIsDone) {
      if (!told.has(result.id)) tellGone(result.id);
    } else if (result.state === 'failed') {
      failure = result.error;
    }
  }
  const failed = of('failed');
  const notTried = of('not-tried').map((r) => r.arg);
  if (session.options.json) {
    const { prune } = options;
    const document = keyChangeDocument(change, results, { goneIsDone, incomplete: prune?.incomplete ?? list?.incomplete ?? null, matched: prune?.matched });
    // Prune's document is its report, whatever came of it; otherwise a run that changed nothing leaves stdout to its failure's document.
    if (prune || document.changed.length > 0 || document.alreadyGone.length > 0) render.json(document);
  }
  // A failure ends a run that does not go on after one: it is the command's failure, as the server said it.
  if (failure !== undefined && !keepGoing) {
    if (notTried.length > 0) render.warn(`Not tried, after that failure: ${notTried.map(shown).join(', ')}.`);
    throw failure;
  }
  const doubts = of('doubt');
  if (doubts.length > 0) throw new CliError(doubts.flatMap(doubtLines), ExitCode.failure);
  const problem = unresolved(options, goneIsDone ? [] : of('gone').map((r) => r.id), of('shared'), of('unread').map((r) => r.arg), list, among);
  if (stoppedBy) throw stoppedBetweenKeys(stoppedBy, notTried, [...notLookedUp(of('unnamed').map((r) => r.arg)), ...(problem?.lines ?? [])]);
  if (failed.length > 0) {
    const total = results.filter((r) => r.state !== 'not-tried').length;
    throw new CliError(
      [`${failed.length} of ${total} keys could not be ${CHANGED[change]}:`, ...failed.map((f) => `  ${shown(f.id)}: ${shown((f.error as Error).message)}`)],
      ExitCode.failure,
    );
  }
  if (problem) throw problem;
}

/**
 * What is left of arguments that named no key to change: the names
 * several keys share, listed (exit 2, as a usage error: the person must
 * choose), then those that name nothing, with the nearest keys (exit 4).
 */
function unresolved(
  options: ChangeViewOptions,
  missing: readonly string[],
  shared: readonly Extract<KeyResult, { state: 'shared' }>[],
  unread: readonly string[],
  list: ChangeResult['list'],
  among: ChangeResult['among'],
): CliError | null {
  if (unread.length > 0) return new CliError(unreadNames(list?.incomplete ?? '', unread), ExitCode.failure);
  if (missing.length === 0 && shared.length === 0) return null;
  const notFound = missing.length === 0 ? [] : notFoundAmong(missing, among, options.command).lines;
  return refuseNames(shared.map((s) => [s.arg, s.keys] as const), notFound, list?.nowMs ?? 0, options.command);
}

function doubtLines({ arg, doubt }: Extract<KeyResult, { state: 'doubt' }>): string[] {
  const lost = `The answer to revoking the key with id '${shown(arg)}' was lost, and the retry found no key with that id: either that revoke took effect, or no key had this id.`;
  if ('named' in doubt) return [lost, `A key named '${shown(arg)}' still exists (${doubt.named.map(shown).join(', ')}): if you meant it, revoke it by its id.`];
  if ('unread' in doubt) return [lost, `svc could not read the whole key list (${shown(doubt.unread)}), so '${shown(arg)}' may also be the name of a key it did not see.`];
  return [lost, `svc could not read the key list to see whether '${shown(arg)}' is also a key's name: check with \`svc keys list\`.`];
}

/** Arguments the server knew as no key's id, which a stop left unread as names. */
function notLookedUp(args: readonly string[]): string[] {
  return args.length === 0 ? [] : [`No key has the id ${args.map(shown).join(', ')}; svc stopped before looking ${args.length === 1 ? 'it' : 'them'} up as a name.`];
}

/**
 * A switch once the PATCH answered. A 204 is done as asked; whether it was
 * done just now or before, svc cannot tell (docs/contract.md §C3).
 */
function tellSwitched(session: KeySession, id: string, enabled: boolean, result: Extract<Changed, { kind: 'switched' }>): void {
  const { render, client } = session;
  const label = `${shown(id)}${result.view.name === null ? '' : ` (${shown(result.view.name)})`}`;
  if (result.changed) render.success(`${enabled ? 'Enabled' : 'Disabled'} ${label}.`);
  else render.success(`${label} is ${enabled ? 'enabled' : 'disabled'}.`);
  const state = keyState(result.view, client.serverNow());
  if (state.works === 'no') render.warn(`It ${stillDoes(state)}: \`svc keys rotate ${shellWord(id)}\` makes a new key in its place.`);
  if (enabled) return;
  const inUse = isKeyInUse(result.view, client.keyHint);
  if (inUse && state.works !== 'no') render.warn('That is the key svc is using: requests with it now answer 401 until it is enabled again, with another key.');
  else if (inUse === null) render.info("(The server shows no key hint in svc's form, so svc cannot tell whether that was the key it is using.)");
}
