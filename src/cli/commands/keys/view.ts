import type { Command } from 'commander';
import { keyStatus, type KeyView } from '../../../client/key-view.js';
import type { Context } from '../../context.js';
import { printJson, relativeTime, styleFor, visible } from '../../output.js';
import type { App } from '../../program.js';
import { BLANK, statusColor } from './list.js';
import { checkKeyId, isKeyInUse, isNotFound, keyNotFound } from '../../keys.js';

export function register(keys: Command, app: App): void {
  keys
    .command('view')
    .description("show one key's record")
    .argument('<id>', 'key id')
    .addHelpText('after', '\nExamples:\n  $ svc keys view key_0123abcd\n  $ svc keys view key_0123abcd --json | jq -r .expiresAt')
    .action(app.action(run));
}

/** One key (docs/contract.md §C8): from GET /user/api-keys/{id}, or the list where the server has no such endpoint. */
export async function run(ctx: Context, idArg: string): Promise<void> {
  const id = checkKeyId(idArg);
  const client = await ctx.client();
  let found;
  try {
    found = await client.getKey(id);
  } catch (error) {
    throw isNotFound(error) ? keyNotFound(id) : error;
  }
  if (ctx.globals.json) return printJson(ctx.io, found.document);
  const rows = fields(found.view, client.serverNow(), client.keyHint);
  if (!ctx.io.stdoutIsTTY) {
    ctx.io.stdout.write(rows.map(([label, , plain]) => `${label.toLowerCase()}\t${plain}\n`).join(''));
    return;
  }
  const style = styleFor(ctx.io.colorStdout);
  const width = Math.max(...rows.map(([label]) => label.length));
  ctx.io.stdout.write(rows.map(([label, human]) => `${style.bold(label.padEnd(width))}  ${human(style)}\n`).join(''));
}

type Style = ReturnType<typeof styleFor>;

/** Label, the value for a person (relative times, colour), the value for a script (ISO times). */
function fields(key: KeyView, nowMs: number, inUse: string | undefined): [string, (style: Style) => string, string][] {
  const text = (value: string | null) => (value === null ? BLANK : visible(value));
  const time = (ms: number | null, known: boolean, none: string): [(style: Style) => string, string] => {
    if (!known) return [() => BLANK, ''];
    if (ms === null) return [() => none, ''];
    const iso = new Date(ms).toISOString();
    return [() => `${iso} (${relativeTime(ms, nowMs)})`, iso];
  };
  const status = keyStatus(key, nowMs);
  const used = isKeyInUse(key, inUse);
  return [
    ['ID', () => text(key.id), key.id ?? ''],
    ['Name', () => text(key.name), key.name ?? ''],
    ['Key', () => `${text(key.hint)}${used ? '  (the key svc is using)' : ''}`, key.hint ?? ''],
    ['Status', (style) => statusColor(status, style), status ?? ''],
    ['Workspace', () => text(key.workspaceId), key.workspaceId ?? ''],
    ['Created', ...time(key.createdAt, key.createdAt !== null, BLANK)],
    ['Expires', ...time(key.expiresAt, key.expiresKnown, 'never')],
    ['Last used', ...time(key.lastUsedAt, key.lastUsedKnown, 'never')],
  ];
}
