import { Option, type Command } from 'commander';
import type { Context } from '../../context.js';
import { parseDuration } from '../../duration.js';
import { UsageError } from '../../errors.js';
import { createKey, showNewKey } from '../../new-key.js';
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
  const lifetimeMs = opts.expiresIn === undefined ? undefined : parseDuration(opts.expiresIn);
  const client = await ctx.client();
  // "In 30 days" is the server's 30 days: with a skewed clock of ours, a short lifetime would be refused as past.
  const expiresAt = lifetimeMs === undefined ? opts.expiresAt : new Date((await client.readServerClock()) + lifetimeMs).toISOString();
  showNewKey(ctx, await createKey(ctx, client, expiresAt ? { name, expiresAt } : { name }));
}

async function askName(ctx: Context): Promise<string> {
  if (!ctx.canPrompt) throw new UsageError('Missing the key name: svc keys create <name>');
  const prompts = await ctx.prompts();
  const name = await prompts.text('Name for the new key:', (v) => (v.trim() ? true : 'A name is required.'));
  return name.trim();
}
