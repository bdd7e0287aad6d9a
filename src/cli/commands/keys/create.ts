import { Option, type Command } from 'commander';
import { UsageError } from '../../errors.js';
import { checkKeyName, validateKeyName } from '../../keys.js';
import { createExpiringKey } from '../../operations/create.js';
import type { App } from '../../program.js';
import type { KeySession } from '../../session.js';
import { createWatch, showNewKey } from '../../views/show-new-key.js';

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
    .action(app.action('key', run));
}

export async function run(session: KeySession, nameArg: string | undefined, opts: CreateOptions): Promise<void> {
  const name = nameArg === undefined ? await askName(session) : checkKeyName(nameArg);
  showNewKey(session, await createExpiringKey(session.client, name, opts, createWatch(session)));
}

async function askName(session: KeySession): Promise<string> {
  if (!session.canPrompt) throw new UsageError('Missing the key name: svc keys create <name>');
  const name = await (await session.prompts()).text('Name for the new key:', validateKeyName);
  return name.trim();
}
