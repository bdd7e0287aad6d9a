import { Option, type Command } from 'commander';
import type { Outcome } from '../../program/after-command.js';
import { parseDuration } from '../../domain/duration.js';
import { listKeys } from '../../operations/keys.js';
import type { App } from '../../program/program.js';
import type { KeySession } from '../../session/session.js';
import type { KeyView } from '../../../client/key-view.js';
import type { TableStream } from '../../terminal/renderer.js';
import { keyColumns, listCaveats } from '../../views/keys.js';
import { clip } from '../../text/text.js';
import { CliError, ExitCode } from '../../errors/errors.js';

export interface ListOptions {
  expiring?: string;
  status?: string;
  name?: string;
  nameExact?: string;
}

export function register(keys: Command, app: App): void {
  keys
    .command('list')
    .alias('ls')
    .description("list the keys of your user, across all workspaces, newest first")
    .option('--expiring <duration>', 'only keys that expire within the duration, expired ones included (7d, 12h)')
    .addOption(new Option('--status <status>', 'only keys in this state').choices(['enabled', 'disabled', 'expired']))
    .option('--name <text>', 'only keys whose name contains the text (any case): --name pr-7 lists pr-77 too')
    .option('--name-exact <name>', 'only keys named exactly this, in its case: the keys `svc keys revoke --name` acts on')
    .addHelpText(
      'after',
      '\nFilters combine; --json keeps the {"keys": [...]} shape with the matching keys only.\n\nExamples:\n  $ svc keys list\n  $ svc keys list --expiring 7d\n  $ svc keys list --status disabled --name ci\n  $ svc keys list --name-exact pr-7 --json\n  $ svc keys list --json | jq -r \'.keys[] | select(.status == "disabled") | .id\'',
    )
    .action(app.action('key', run));
}

export async function run(session: KeySession, opts: ListOptions = {}): Promise<Outcome> {
  const filter = {
    expiringWithinMs: opts.expiring === undefined ? undefined : parseDuration(opts.expiring),
    status: opts.status,
    name: opts.name,
    nameExact: opts.nameExact,
  };
  const { render, io, options, client } = session;
  const inUse = client.keyHint;
  // Rows go out as their page comes; --json waits for every page, to print one document.
  let table: TableStream<KeyView> | undefined;
  const { list, matching, unjudged } = await listKeys(
    client,
    filter,
    options.json
      ? undefined
      : (records, nowMs) => {
          if (records.length === 0) return;
          table ??= render.tableStream(keyColumns(inUse, nowMs, render.columns));
          table.rows(records.map((record) => record.view));
        },
  );
  if (options.json) {
    // The server's document, and, only when svc could not read it whole, why: a script that reads the keys finds it beside them.
    render.json({ ...list.body, keys: matching.map((record) => record.document), ...(list.incomplete === null ? {} : { incomplete: list.incomplete }) });
  } else if (matching.length === 0 && io.stdoutIsTTY) {
    render.info(matching.length === list.keys.length ? 'No keys yet. Create one with `svc keys create <name>`.' : 'No key matches.');
  } else {
    (table ?? render.tableStream(keyColumns(inUse, list.nowMs, render.columns))).end();
    if (io.stdoutIsTTY && matching.some((record) => record.view.hint === inUse)) render.info('* the key svc is using');
  }
  const caveats = listCaveats(unjudged, null, 'left them out');
  if (caveats.length > 0) render.warn(...caveats);
  // What was read is printed; exit 1 says it is not every key, as prune's does (docs/contract.md §C6).
  if (list.incomplete !== null) {
    const read = options.json ? 'the document holds only the keys svc could read' : 'only the keys svc could read were listed';
    throw new CliError(`The key list may be incomplete: ${clip(list.incomplete, 200)}; ${read}.`, ExitCode.failure);
  }
  return { list };
}
