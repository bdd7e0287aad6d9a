import { Option, type Command } from 'commander';
import type { Outcome } from '../../after-command.js';
import { parseDuration } from '../../duration.js';
import { listKeys } from '../../operations/keys.js';
import type { App } from '../../program.js';
import type { KeySession } from '../../session.js';
import { keyColumns } from '../../views/keys.js';

export interface ListOptions {
  expiring?: string;
  status?: string;
  name?: string;
}

export function register(keys: Command, app: App): void {
  keys
    .command('list')
    .alias('ls')
    .description("list the keys of your user, across all workspaces, newest first")
    .option('--expiring <duration>', 'only keys that expire within the duration, expired ones included (7d, 12h)')
    .addOption(new Option('--status <status>', 'only keys in this state').choices(['enabled', 'disabled', 'expired']))
    .option('--name <text>', 'only keys whose name contains the text (any case)')
    .addHelpText(
      'after',
      '\nFilters combine; --json keeps the {"keys": [...]} shape with the matching keys only.\n\nExamples:\n  $ svc keys list\n  $ svc keys list --expiring 7d\n  $ svc keys list --status disabled --name ci\n  $ svc keys list --json | jq -r \'.keys[] | select(.status == "disabled") | .id\'',
    )
    .action(app.action('key', run));
}

export async function run(session: KeySession, opts: ListOptions = {}): Promise<Outcome> {
  const filter = {
    expiringWithinMs: opts.expiring === undefined ? undefined : parseDuration(opts.expiring),
    status: opts.status,
    name: opts.name,
  };
  const { list, matching } = await listKeys(session.client, filter);
  const { render, io, options } = session;
  if (options.json) {
    render.json({ ...list.body, keys: matching.map((record) => record.document) });
    return { list };
  }
  const inUse = session.client.keyHint;
  if (matching.length === 0 && io.stdoutIsTTY) {
    render.info(matching.length === list.keys.length ? 'No keys yet. Create one with `svc keys create <name>`.' : 'No key matches.');
    return { list };
  }
  render.table(keyColumns(inUse, list.nowMs, render.columns), matching.map((record) => record.view));
  if (io.stdoutIsTTY && matching.some((record) => record.view.hint === inUse)) render.info('* the key svc is using');
  return { list };
}
