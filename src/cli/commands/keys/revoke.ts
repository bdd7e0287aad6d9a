import { confirmChange } from '../../dialogs/confirm.js';
import type { Command } from 'commander';
import type { KeyView } from '../../../client/key-view.js';
import type { Outcome } from '../../program/after-command.js';
import { keysToActOn } from '../../dialogs/pick-key.js';
import { CliError, ExitCode, InterruptedError, UsageError } from '../../errors/errors.js';
import { isKeyInUse, listedFor, sharedName } from '../../domain/keys.js';
import { keysByName, keysNamed, namedIn, revokeKeys, revokeNamedKeys, unresolved, type KeyOutcome, type KeysActedOn, type KeysRun, type Revoked } from '../../operations/keys.js';
import type { App } from '../../program/program.js';
import type { KeySession } from '../../session/session.js';
import { clip, shellWord } from '../../text/text.js';
import { notLookedUp, stoppableBetweenKeys, stoppedBetweenKeys } from '../../terminal/stop-between-keys.js';
import { describeKey, shown } from '../../views/keys.js';

export interface RevokeOptions {
  yes?: boolean;
  ifExists?: boolean;
  name?: string;
  all?: boolean;
}

export function register(keys: Command, app: App): void {
  keys
    .command('revoke')
    .alias('rm')
    .description('revoke keys for good (asks first on a terminal; --yes otherwise)')
    .argument('[ids...]', 'key ids, or names each of exactly one key (a pick-list is offered on a terminal when none is given)')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--if-exists', 'treat a key that is already gone as success')
    .option('--name <name>', 'the keys named exactly this (not a part of it, and in its case), instead of ids; several are refused without --all')
    .option('--all', 'with --name: revoke every key of that name')
    .addHelpText(
      'after',
      '\nWith --name the whole key list is read first; when svc cannot read all of it, it revokes nothing (exit 1).\n\nExamples:\n  $ svc keys revoke key_0123abcd\n  $ svc keys revoke key_0123abcd key_4567efgh --yes --if-exists\n  $ svc keys revoke --name pr-7 --all --yes   # every key named pr-7, not pr-77',
    )
    .action(app.action('key', run));
}

const NEEDS_YES = 'Refusing to revoke without confirmation: pass --yes (or run on a terminal to be asked).';

export async function run(session: KeySession, idArgs: string[], opts: RevokeOptions): Promise<Outcome> {
  if (opts.name !== undefined) return revokeByName(session, idArgs, opts.name, opts);
  if (opts.all) throw new UsageError('--all is about --name: svc keys revoke --name <name> --all');
  const { client } = session;
  // The pick-list and the confirmation show the same listing; it is read once.
  const picked = await keysToActOn(session, idArgs, { command: 'revoke', many: true, yes: opts.yes, question: 'Keys to revoke:' });
  let { ids, list } = picked;
  if (!opts.yes) {
    if (!session.canPrompt) throw new UsageError(NEEDS_YES);
    list ??= await client.listAllKeys();
    // The question names the keys that will be revoked: a name is resolved to its key's id before it is asked.
    const byName = namedIn(list, ids);
    if (byName.shared.size > 0 || byName.unsure.length > 0) throw await unresolved(client, [], byName, 'revoke');
    ids = ids.map((id) => byName.ids.get(id) ?? id);
    await confirm(session, ids, list.keys, list.nowMs);
  }
  const known = new Map((list?.keys ?? []).map((k) => [k.id, k.name]));
  const told = new Set<string>();
  const { outcomes, notTried, byName, stoppedBy, unnamed } = await stoppableBetweenKeys<Revoked, KeysActedOn<Revoked>>(
    session.deps,
    session.render,
    'revoked',
    (o, name) => tellLanded(session, o, name ?? known.get(o.id) ?? null, opts) && told.add(o.id),
    (watch) => revokeNamedKeys(client, ids, watch),
  );
  const listed = (byName?.list ?? list)?.keys ?? [];
  const names = new Map(listed.map((k) => [k.id, k.name]));
  const doubts = await lostAndNamed(client, outcomes.flatMap((o) => (o.state === 'done' && o.value.goneOnRetry && !names.has(o.id) ? [o.id] : [])));
  const missing = reportRevoked(session, ids, outcomes.filter((o) => !doubts.has(o.id)), notTried, names, opts, told);
  if (doubts.size > 0) throw new CliError([...doubts.values()].flat(), ExitCode.failure);
  // --if-exists takes a key that is gone for done, but not a name several keys share: which one was meant is for the person to say.
  const problem =
    missing.length > 0 || (byName?.shared.size ?? 0) > 0 || (byName?.unsure.length ?? 0) > 0 ? await unresolved(client, missing, byName, 'revoke') : null;
  if (stoppedBy) throw stoppedBetweenKeys(stoppedBy, notTried, [...notLookedUp(unnamed), ...(problem?.lines ?? [])]);
  if (problem) throw problem;
  return { list: byName?.list ?? list };
}

/**
 * An argument whose revoke lost its answer, and whose retry found no key of
 * that id, is gone as an id; but it may have been meant as a name, which
 * svc reads only after a plain 404 (an id always wins). If some key has it
 * for its name, or the list cannot be read whole to tell, svc cannot say
 * which key the person meant, nor whether the first revoke did anything:
 * it says so and names the keys, instead of reporting the argument gone.
 */
async function lostAndNamed(client: KeySession['client'], args: readonly string[]): Promise<Map<string, string[]>> {
  const doubts = new Map<string, string[]>();
  if (args.length === 0) return doubts;
  const lost = (arg: string) =>
    `The answer to revoking the key with id '${shown(arg)}' was lost, and the retry found no key with that id: either that revoke took effect, or no key had this id.`;
  let byName: Awaited<ReturnType<typeof keysByName>>;
  try {
    byName = await keysByName(client, args);
  } catch (error) {
    if (error instanceof InterruptedError) throw error;
    for (const arg of args) doubts.set(arg, [lost(arg), `svc could not read the key list to see whether '${shown(arg)}' is also a key's name: check with \`svc keys list\`.`]);
    return doubts;
  }
  for (const arg of args) {
    const named = byName.ids.get(arg);
    const namedIds = named === undefined ? byName.shared.get(arg)?.map((k) => k.id) : [named];
    if (namedIds !== undefined) {
      doubts.set(arg, [lost(arg), `A key named '${shown(arg)}' still exists (${namedIds.map(shown).join(', ')}): if you meant it, revoke it by its id.`]);
    } else if (byName.unsure.includes(arg)) {
      doubts.set(arg, [lost(arg), `svc could not read the whole key list (${shown(byName.list.incomplete ?? '')}), so '${shown(arg)}' may also be the name of a key it did not see.`]);
    }
  }
  return doubts;
}

/**
 * Tells a revoke as it lands, before the next is tried, so that a run
 * stopped partway has told every key it revoked: true when it told it. A
 * lost answer whose retry found no key waits for the end, where svc may
 * read the list to tell what it was.
 */
function tellLanded(session: KeySession, outcome: KeyOutcome<Revoked>, name: string | null, opts: RevokeOptions): boolean {
  const { render } = session;
  if (outcome.state === 'done' && !outcome.value.goneOnRetry) {
    render.success(`Revoked ${name ? `'${shown(name)}' (${shown(outcome.id)})` : shown(outcome.id)}.`);
    return true;
  }
  if (outcome.state === 'gone' && opts.ifExists) {
    render.info(`${shown(outcome.id)} was already gone.`);
    return true;
  }
  return false;
}

/**
 * Says what became of each revoke not told as it landed (`told`), prints
 * --json's document, and throws the first failure; returns the ids found
 * gone, for the caller to report.
 */
function reportRevoked(
  session: KeySession,
  ids: readonly string[],
  outcomes: readonly KeyOutcome<Revoked>[],
  notTried: readonly string[],
  names: ReadonlyMap<string | null, string | null>,
  opts: RevokeOptions,
  told: ReadonlySet<string>,
): string[] {
  const { render } = session;
  const answers: unknown[] = [];
  const missing: string[] = [];
  let failure: unknown;
  for (const outcome of outcomes) {
    const { id } = outcome;
    if (outcome.state === 'done' && outcome.value.goneOnRetry && !names.has(id)) {
      // The first DELETE's answer was lost and the retry found nothing: svc cannot say that it revoked a key, only
      // that none has this id now. A key the list showed a moment ago was there for the first DELETE to revoke.
      answers.push({ id, revoked: true, unconfirmed: true });
      render.info(`${shown(id)} is gone: the answer to its revoke was lost and the retry found no such key, so either that revoke took effect or no key ever had this id.`);
    } else if (outcome.state === 'done') {
      answers.push(outcome.value.answer);
      const name = names.get(id);
      if (!told.has(id)) render.success(`Revoked ${name ? `'${shown(name)}' (${shown(id)})` : shown(id)}.`);
    } else if (outcome.state === 'gone' && opts.ifExists) {
      answers.push({ id, revoked: false });
      if (!told.has(id)) render.info(`${shown(id)} was already gone.`);
    } else if (outcome.state === 'gone') {
      // Carry on with the other ids, like rm does, and fail at the end.
      missing.push(id);
    } else {
      failure = outcome.error;
    }
  }
  if (session.options.json && answers.length > 0) render.json(ids.length === 1 ? answers[0] : answers);
  if (failure !== undefined) {
    if (notTried.length > 0) render.warn(`Not tried, after that failure: ${notTried.map(shown).join(', ')}.`);
    throw failure;
  }
  return missing;
}

/**
 * `--name NAME`: the keys named exactly NAME, read from the whole list (a
 * list read in part may hide more of them: nothing is revoked). Several are
 * a usage error that lists them, unless --all says every one is meant.
 */
async function revokeByName(session: KeySession, idArgs: readonly string[], given: string, opts: RevokeOptions): Promise<Outcome> {
  const name = given.trim();
  if (idArgs.length > 0) throw new UsageError('Give key ids or --name, not both.');
  if (name === '') throw new UsageError('--name needs the name of the keys: svc keys revoke --name <name>');
  if (!opts.yes && !session.canPrompt) throw new UsageError(NEEDS_YES);
  const { client } = session;
  const { list, keys } = await keysNamed(client, name);
  if (keys.length === 0) {
    if (opts.ifExists) {
      session.render.info(`No key is named '${clip(name, 200)}'.`);
      if (session.options.json) session.render.json([]);
      return { list };
    }
    throw new CliError(
      [`No key is named '${clip(name, 200)}' (exactly; \`svc keys list --name ${shellWord(name)}\` shows the names that contain it).`],
      ExitCode.notFound,
    );
  }
  if (keys.length > 1 && !opts.all) {
    throw new UsageError([...sharedName(name, keys, list.nowMs), `Or revoke every one: svc keys revoke --name ${shellWord(name)} --all`]);
  }
  const ids = keys.map((key) => key.id);
  if (!opts.yes) await confirm(session, ids, list.keys, list.nowMs);
  const names = new Map(keys.map((k) => [k.id, k.name]));
  const told = new Set<string>();
  // Ids from the list: one gone meanwhile is gone, never read as a name.
  const { outcomes, notTried, stoppedBy } = await stoppableBetweenKeys<Revoked, KeysRun<Revoked>>(
    session.deps,
    session.render,
    'revoked',
    (o) => tellLanded(session, o, names.get(o.id) ?? null, opts) && told.add(o.id),
    (watch) => revokeKeys(client, ids, false, watch),
  );
  const missing = reportRevoked(session, ids, outcomes, notTried, names, opts, told);
  const problem = missing.length > 0 ? await unresolved(client, missing, null, 'revoke') : null;
  if (stoppedBy) throw stoppedBetweenKeys(stoppedBy, notTried, problem?.lines ?? []);
  if (problem) throw problem;
  return { list };
}

async function confirm(session: KeySession, ids: string[], keys: readonly KeyView[], nowMs: number): Promise<void> {
  const { render, client } = session;
  const known = new Map(keys.filter((k) => k.id !== null).map((k) => [k.id!, k]));
  for (const id of ids) {
    const key = known.get(id);
    render.info(`  ${key ? describeKey(key, client.keyHint, nowMs) : `${shown(id)}  (not found)`}`);
  }
  const listed = listedFor(keys, nowMs, client.keyHint);
  const inUse = ids.map((id) => (known.has(id) ? isKeyInUse(known.get(id)!, client.keyHint, listed) : false));
  const untold = ids.filter((_, i) => inUse[i] === null);
  if (inUse.includes(true)) {
    render.warn(`${ids.length === 1 ? 'This' : 'One of these'} is the key svc is using: once revoked, svc will answer 401 until you log in with another key.`);
  } else if (untold.length > 0) {
    render.warn(`svc cannot tell whether ${untold.map(shown).join(', ')} is the key it is using from the hints this server shows.`);
  }
  const what = ids.length === 1 ? shown(ids[0]!) : `these ${ids.length} keys`;
  await confirmChange(session, `Revoke ${what}? This cannot be undone.`, 'nothing was revoked');
}
