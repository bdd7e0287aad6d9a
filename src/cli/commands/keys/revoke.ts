import type { Command } from 'commander';
import { keysToActOn } from '../../dialogs/pick-key.js';
import { confirmRevoke } from '../../dialogs/key-changes.js';
import { refuseNames } from '../../domain/keys.js';
import { CliError, ExitCode, UsageError } from '../../errors/errors.js';
import { changeKeys, type ChangeRequest } from '../../operations/change-keys.js';
import { keysContext } from '../../operations/context.js';
import { idsNamedIn, keysNamed } from '../../operations/keys.js';
import type { Outcome } from '../../program/after-command.js';
import type { App } from '../../program/program.js';
import type { KeySession } from '../../session/session.js';
import { clip, shellWord } from '../../text/text.js';
import { keyChangeDocument } from '../../views/documents.js';
import { keyChangeView } from '../../views/key-changes.js';

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
    ids = await idsNamedIn(client, list, ids, 'revoke');
    await confirmRevoke(session, ids, list.keys, list.nowMs);
  }
  const request: ChangeRequest = { change: 'revoke', targets: { args: ids }, list, goneIsDone: opts.ifExists };
  const view = keyChangeView(session, request, { command: 'revoke' });
  const result = await changeKeys(keysContext(session), request, view.events);
  view.report(result);
  return { list: result.list ?? list };
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
  const { list, keys } = await keysNamed(session.client, name);
  if (keys.length === 0) {
    if (opts.ifExists) {
      session.render.info(`No key is named '${clip(name, 200)}'.`);
      if (session.options.json) session.render.json(keyChangeDocument('revoke', [], { incomplete: list.incomplete }));
      return { list };
    }
    throw new CliError(
      [`No key is named '${clip(name, 200)}' (exactly; \`svc keys list --name ${shellWord(name)}\` shows the names that contain it).`],
      ExitCode.notFound,
    );
  }
  if (keys.length > 1 && !opts.all) {
    throw refuseNames([[name, keys]], [], list.nowMs, 'revoke');
  }
  const ids = keys.map((key) => key.id);
  if (!opts.yes) await confirmRevoke(session, ids, list.keys, list.nowMs);
  // Ids from the list: one gone meanwhile is gone, never read as a name.
  const request: ChangeRequest = { change: 'revoke', targets: { keys }, list, goneIsDone: opts.ifExists };
  const view = keyChangeView(session, request, { command: 'revoke' });
  view.report(await changeKeys(keysContext(session), request, view.events));
  return { list };
}
