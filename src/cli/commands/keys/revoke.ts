import type { Command } from 'commander';
import type { ApiClient } from '../../../client/api.js';
import { readKeyList, type KeyView } from '../../../client/key-view.js';
import type { Context } from '../../context.js';
import { CliError, ExitCode, UsageError } from '../../errors.js';
import { printJson, visible } from '../../output.js';
import type { App } from '../../program.js';
import { checkKeyId, describeKey, isKeyInUse, isNotFound, keyNotFound } from '../../keys.js';

export interface RevokeOptions {
  yes?: boolean;
  ifExists?: boolean;
  /** Keys the caller has listed already (the interactive session), so that messages can name them. */
  known?: KeyView[];
}

export function register(keys: Command, app: App): void {
  keys
    .command('revoke')
    .alias('rm')
    .description('revoke keys for good (asks first on a terminal; --yes otherwise)')
    .argument('[ids...]', 'key ids (a pick-list is offered on a terminal when none is given)')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--if-exists', 'treat a key that is already gone as success')
    .addHelpText(
      'after',
      '\nExamples:\n  $ svc keys revoke key_0123abcd\n  $ svc keys revoke key_0123abcd key_4567efgh --yes --if-exists',
    )
    .action(app.action(run));
}

/** Outcome for one id: the API's answer, or `revoked: false` for a gone key under --if-exists. */
type Outcome = unknown;

export async function run(ctx: Context, idArgs: string[], opts: RevokeOptions): Promise<void> {
  idArgs.forEach(checkKeyId);
  const client = await ctx.client();
  // The pick-list and the confirmation show the same listing; it is fetched once.
  let listed: Listing | undefined;
  let ids = idArgs;
  if (ids.length === 0) {
    listed = await listForPrompt(ctx, client, MISSING_ID);
    ids = await pickKeys(ctx, listed);
  }
  if (!opts.yes) {
    listed ??= await listForPrompt(ctx, client, NEEDS_YES);
    await confirm(ctx, ids, listed);
  }
  const names = new Map((listed?.keys ?? opts.known ?? []).map((k) => [k.id, k.name]));

  const outcomes: Outcome[] = [];
  const missing: string[] = [];
  for (const id of ids) {
    try {
      outcomes.push(await client.revokeKey(id));
      const name = names.get(id);
      ctx.msg.success(`Revoked ${name ? `'${visible(name)}' (${visible(id)})` : visible(id)}.`);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      if (opts.ifExists) {
        outcomes.push({ id, revoked: false });
        ctx.msg.info(`${visible(id)} was already gone.`);
        continue;
      }
      // Carry on with the other ids, like rm does, and fail at the end.
      missing.push(id);
    }
  }
  if (ctx.globals.json && outcomes.length > 0) printJson(ctx.io, idArgs.length === 1 ? outcomes[0] : outcomes);
  if (missing.length > 0) throw keyNotFound(missing.join(', '));
}

const MISSING_ID = 'Missing the key id: svc keys revoke <id>… (see `svc keys list`)';
const NEEDS_YES = 'Refusing to revoke without confirmation: pass --yes (or run on a terminal to be asked).';

/** The keys, and the server's clock they are read against. */
interface Listing {
  keys: KeyView[];
  nowMs: number;
  /** The hint of the key svc is using. */
  inUse: string;
}

/** The keys to show a person; with nobody to ask, a usage error saying what to pass instead. */
async function listForPrompt(ctx: Context, client: ApiClient, withoutPrompt: string): Promise<Listing> {
  if (!ctx.canPrompt) throw new UsageError(withoutPrompt);
  const keys = readKeyList((await client.listKeys()).body);
  return { keys, nowMs: client.serverNow(), inUse: client.keyHint };
}

async function pickKeys(ctx: Context, { keys, nowMs, inUse }: Listing): Promise<string[]> {
  const choices = keys.filter((k) => k.id !== null);
  if (choices.length === 0) throw new UsageError('There are no keys to revoke.');
  const prompts = await ctx.prompts();
  const ids = await prompts.pickMany(
    'Keys to revoke (space to select, enter to confirm):',
    choices.map((k) => ({ name: describeKey(k, inUse, nowMs), value: k.id! })),
  );
  if (ids.length === 0) throw new UsageError('No key selected.');
  return ids;
}

async function confirm(ctx: Context, ids: string[], { keys, nowMs: now, inUse }: Listing): Promise<void> {
  const prompts = await ctx.prompts();
  const known = new Map(keys.filter((k) => k.id !== null).map((k) => [k.id!, k]));
  for (const id of ids) {
    const key = known.get(id);
    ctx.msg.info(`  ${key ? describeKey(key, inUse, now) : `${visible(id)}  (not found)`}`);
  }
  const inUseFlags = ids.map((id) => (known.has(id) ? isKeyInUse(known.get(id)!, inUse) : false));
  if (inUseFlags.includes(true)) {
    ctx.msg.warn('One of these is the key svc is using: once revoked, svc will answer 401 until you log in with another key.');
  } else if (inUseFlags.includes(null)) {
    ctx.msg.warn('This server shows no key hints, so svc cannot tell whether one of these is the key it is using.');
  }
  const what = ids.length === 1 ? visible(ids[0]!) : `these ${ids.length} keys`;
  if (!(await prompts.confirm(`Revoke ${what}? This cannot be undone.`))) {
    throw new CliError('Cancelled; nothing was revoked.', ExitCode.failure);
  }
}
