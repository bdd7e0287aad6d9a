import { Option, type Command } from 'commander';
import type { CreatedKey } from '../../../contract/types.js';
import type { Context } from '../../context.js';
import { parseDuration } from '../../duration.js';
import { UsageError } from '../../errors.js';
import { printJson, relativeTime, styleFor } from '../../output.js';
import type { App } from '../../program.js';

export interface CreateOptions {
  expiresIn?: string;
  expiresAt?: string;
}

export function register(keys: Command, app: App): void {
  keys
    .command('create')
    .description('create a key and print its secret, once')
    .argument('[name]', 'a label for the key (asked for on a terminal when missing)')
    .addOption(new Option('--expires-in <duration>', 'expire after a duration: 30d, 12h, 90m, 2w').conflicts('expiresAt'))
    .addOption(new Option('--expires-at <time>', 'expire at an RFC 3339 time, e.g. 2027-01-31T00:00:00Z'))
    .addHelpText(
      'after',
      '\nThe secret is printed once and never again; store it at once.\n\nExamples:\n  $ svc keys create laptop\n  $ svc keys create ci --expires-in 30d\n  $ KEY=$(svc keys create deploy-bot)   # piped: only the secret on stdout',
    )
    .action(app.action(run));
}

export async function run(ctx: Context, nameArg: string | undefined, opts: CreateOptions): Promise<void> {
  const name = nameArg ?? (await askName(ctx));
  const expiresAt = opts.expiresIn
    ? new Date(Date.now() + parseDuration(opts.expiresIn)).toISOString()
    : opts.expiresAt;
  const client = await ctx.client();
  const created = await client.createKey(expiresAt ? { name, expiresAt } : { name });
  showCreated(ctx, created);
}

async function askName(ctx: Context): Promise<string> {
  if (!ctx.canPrompt) throw new UsageError('Missing the key name: svc keys create <name>');
  const prompts = await ctx.prompts();
  const name = await prompts.text('Name for the new key:', (v) => (v.trim() ? true : 'A name is required.'));
  return name.trim();
}

/**
 * Prints a new key: the one and only time its secret is shown. With --json a
 * caller that prints a larger document of its own passes `printDocument: false`.
 */
export function showCreated(ctx: Context, created: CreatedKey, printDocument = true): void {
  const { io, msg } = ctx;
  if (ctx.globals.json) {
    if (printDocument) printJson(io, created);
  } else if (!io.stdoutIsTTY) {
    io.stdout.write(`${created.secret}\n`);
  } else {
    const expiry = created.expiresAt ? `expires ${relativeTime(created.expiresAt, Date.now())}` : 'never expires';
    msg.success(`Created key '${created.name}' (${created.id}), ${expiry}, workspace ${created.workspaceId}.`);
    io.stdout.write(`\n  ${styleFor(io.colorStdout).bold(created.secret)}\n\n`);
  }
  msg.warn(
    'This is the only time this secret is shown: store it now. ' +
      `If it is lost, it cannot be recovered: revoke the key (svc keys revoke ${created.id}) and create a new one.`,
  );
}
