import type { Command } from 'commander';
import type { ChalkInstance } from 'chalk';
import { keyHint } from '../../../contract/key-format.js';
import type { KeyRecord, KeyStatus } from '../../../contract/types.js';
import type { Context } from '../../context.js';
import { printJson, printRows, relativeTime, type Column } from '../../output.js';
import type { App } from '../../program.js';

export function register(keys: Command, app: App): void {
  keys
    .command('list')
    .alias('ls')
    .description("list the keys of your user, across all workspaces, newest first")
    .addHelpText('after', '\nExamples:\n  $ svc keys list\n  $ svc keys list --json | jq -r \'.keys[] | select(.status == "disabled") | .id\'')
    .action(app.action(run));
}

export async function run(ctx: Context): Promise<void> {
  const client = await ctx.client();
  const { body } = await client.listKeys();
  if (ctx.globals.json) return printJson(ctx.io, body);
  const inUse = ctx.credentialsUsed ? keyHint(ctx.credentialsUsed.apiKey) : undefined;
  if (body.keys.length === 0 && ctx.io.stdoutIsTTY) {
    ctx.msg.info('No keys yet. Create one with `svc keys create <name>`.');
    return;
  }
  await printRows(ctx.io, keyColumns(inUse, Date.now()), body.keys);
  if (ctx.io.stdoutIsTTY && body.keys.some((k) => k.hint === inUse)) ctx.msg.info('* the key svc is using');
}

export function statusColor(status: KeyStatus, style: ChalkInstance): string {
  if (status === 'enabled') return style.green(status);
  if (status === 'disabled') return style.yellow(status);
  return style.red(status);
}

/** The table of keys; shared with the interactive session. */
export function keyColumns(inUse: string | undefined, nowMs: number): Column<KeyRecord>[] {
  const when = (iso: string | null, none: string) => (iso ? relativeTime(iso, nowMs) : none);
  return [
    {
      header: 'ID',
      human: (k, s) => (k.hint === inUse ? s.bold(`* ${k.id}`) : `  ${k.id}`),
      plain: (k) => k.id,
    },
    { header: 'NAME', human: (k) => truncate(k.name, 24), plain: (k) => k.name },
    { header: 'KEY', human: (k, s) => s.dim(k.hint), plain: (k) => k.hint, dropRank: 5 },
    { header: 'STATUS', human: (k, s) => statusColor(k.status, s), plain: (k) => k.status },
    { header: 'WORKSPACE', human: (k) => k.workspaceId, plain: (k) => k.workspaceId, dropRank: 2 },
    { header: 'CREATED', human: (k) => when(k.createdAt, ''), plain: (k) => k.createdAt, dropRank: 1 },
    { header: 'EXPIRES', human: (k) => when(k.expiresAt, 'never'), plain: (k) => k.expiresAt ?? '', dropRank: 3 },
    { header: 'LAST USED', human: (k) => when(k.lastUsedAt, 'never'), plain: (k) => k.lastUsedAt ?? '', dropRank: 4 },
  ];
}

function truncate(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}
