import { Option, type Command } from 'commander';
import type { ChalkInstance } from 'chalk';
import { keyDocuments, keyStatus, readKey, type KeyView } from '../../../client/key-view.js';
import { parseDuration } from '../../duration.js';
import { matchesFilter, type ListFilter } from '../../key-filters.js';
import type { Context } from '../../context.js';
import { printJson, printRows, relativeTime, visible, type Column } from '../../output.js';
import type { App } from '../../program.js';

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
    .action(app.action(run));
}

export async function run(ctx: Context, opts: ListOptions = {}): Promise<void> {
  const filter: ListFilter = {
    expiringWithinMs: opts.expiring === undefined ? undefined : parseDuration(opts.expiring),
    status: opts.status,
    name: opts.name,
  };
  const filtered = Object.values(filter).some((value) => value !== undefined);
  const client = await ctx.client();
  const { body } = await client.listKeys();
  const now = client.serverNow();
  const documents = keyDocuments(body);
  const matching = filtered ? documents.filter((doc) => matchesFilter(readKey(doc), filter, now)) : documents;
  if (ctx.globals.json) return printJson(ctx.io, filtered ? { ...(body as object), keys: matching } : body);
  const keys = matching.map(readKey);
  const inUse = client.keyHint;
  if (keys.length === 0 && ctx.io.stdoutIsTTY) {
    ctx.msg.info(filtered ? 'No key matches.' : 'No keys yet. Create one with `svc keys create <name>`.');
    return;
  }
  printRows(ctx.io, keyColumns(inUse, now), keys);
  if (ctx.io.stdoutIsTTY && keys.some((k) => k.hint === inUse)) ctx.msg.info('* the key svc is using');
}

export function statusColor(status: string | null, style: ChalkInstance): string {
  if (status === null) return BLANK;
  if (status === 'enabled') return style.green(status);
  if (status === 'disabled') return style.yellow(status);
  if (status === 'expired') return style.red(status);
  return visible(status);
}

/** What a table shows for a field the server did not send. */
export const BLANK = '-';

/** An ISO time for scripts, or nothing. */
function iso(ms: number | null): string {
  return ms === null ? '' : new Date(ms).toISOString();
}

/** The table of keys; shared with the interactive session. `nowMs` is the server's clock. */
export function keyColumns(inUse: string | undefined, nowMs: number): Column<KeyView>[] {
  const when = (ms: number | null, known: boolean, none: string) =>
    !known ? BLANK : ms === null ? none : relativeTime(ms, nowMs);
  const shown = (value: string | null) => (value === null ? BLANK : visible(value));
  return [
    {
      header: 'ID',
      human: (k, s) => (inUse !== undefined && k.hint === inUse ? s.bold(`* ${shown(k.id)}`) : `  ${shown(k.id)}`),
      plain: (k) => k.id ?? '',
    },
    { header: 'NAME', human: (k) => truncate(shown(k.name), 24), plain: (k) => k.name ?? '' },
    { header: 'KEY', human: (k, s) => s.dim(shown(k.hint)), plain: (k) => k.hint ?? '', dropRank: 5 },
    { header: 'STATUS', human: (k, s) => statusColor(keyStatus(k, nowMs), s), plain: (k) => keyStatus(k, nowMs) ?? '' },
    { header: 'WORKSPACE', human: (k) => shown(k.workspaceId), plain: (k) => k.workspaceId ?? '', dropRank: 2 },
    { header: 'CREATED', human: (k) => when(k.createdAt, k.createdAt !== null, ''), plain: (k) => iso(k.createdAt), dropRank: 1 },
    { header: 'EXPIRES', human: (k) => when(k.expiresAt, k.expiresKnown, 'never'), plain: (k) => iso(k.expiresAt), dropRank: 3 },
    { header: 'LAST USED', human: (k) => when(k.lastUsedAt, k.lastUsedKnown, 'never'), plain: (k) => iso(k.lastUsedAt), dropRank: 4 },
  ];
}

function truncate(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}
