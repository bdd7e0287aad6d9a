import { Option, type Command } from 'commander';
import { handOverNewKey, showOrRevokeNewKey } from '../../delivery/hand-over.js';
import { deliveryPlan, onDeliveryFailureOption, type DeliveryOptions } from '../../delivery/plan.js';
import { UsageError } from '../../errors/errors.js';
import { askKeyName } from '../../dialogs/new-key.js';
import { checkKeyName } from '../../domain/keys.js';
import { createExpiringKey } from '../../operations/create.js';
import type { App } from '../../program/program.js';
import type { KeySession } from '../../session/session.js';
import { newKeyDocument } from '../../views/documents.js';
import { createWatch, refuseDiscardedStdout } from '../../views/show-new-key.js';

export interface CreateOptions extends DeliveryOptions {
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
    .option('--to-file <path>', 'write the secret to a .env file (SVC_API_KEY=…, mode 0600) instead of printing it')
    .option('--to-command <command>', "run a shell command with the secret on its stdin instead of printing it, e.g. 'gh secret set SVC_API_KEY'")
    .option('--force', "with --to-file: replace the file's SVC_API_KEY line if the file exists, keeping its other lines")
    .addOption(onDeliveryFailureOption())
    .addHelpText(
      'after',
      '\nThe secret is printed once and never again; store it at once. With --to-file or --to-command it is delivered instead, not printed. If delivery fails, svc exits 1; where nobody sees the terminal (stdout not a terminal, or CI set) it revokes the new key and prints no secret, on a terminal it prints the secret instead (--on-delivery-failure). If the answer is lost (a gateway\'s 504), svc looks for the key it may have made for up to a minute, and revokes it when it can tell it for its own: with --expires-in it can (by the expiry it sent), without it only lists the keys of that name.\n\nExamples:\n  $ svc keys create laptop\n  $ svc keys create ci --expires-in 30d\n  $ KEY=$(svc keys create deploy-bot)   # piped: only the secret on stdout\n  $ svc keys create ci --to-command \'gh secret set SVC_API_KEY\'\n  $ svc keys create local --to-file .env',
    )
    .action(app.action('key', run));
}

export async function run(session: KeySession, nameArg: string | undefined, opts: CreateOptions): Promise<void> {
  const plan = deliveryPlan(opts, session.io);
  if (plan === null) refuseDiscardedStdout(session.io);
  const name = nameArg === undefined ? await askName(session) : checkKeyName(nameArg);
  const key = await createExpiringKey(session.client, name, opts, createWatch(session));
  if (plan === null) return showOrRevokeNewKey(session, key);
  const delivered = await handOverNewKey(session, key, plan);
  if (session.options.json) session.render.json(newKeyDocument(key, { delivered }));
}

async function askName(session: KeySession): Promise<string> {
  if (!session.canPrompt) throw new UsageError('Missing the key name: svc keys create <name>');
  return askKeyName(session);
}
