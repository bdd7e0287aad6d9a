import type { Command } from 'commander';
import { isWellFormedKey, keyHint } from '../../contract/key-format.js';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { printJson } from '../output.js';
import type { App } from '../program.js';
import { readAll } from '../read-stdin.js';

export interface LoginOptions {
  withKey?: boolean;
}

export function register(program: Command, app: App): void {
  program
    .command('login')
    .description('check an API key against the server and save it to the profile')
    .option('--with-key', 'read the key from stdin instead of prompting')
    .addHelpText(
      'after',
      '\nThe key is never taken as an argument: it would show in `ps` and in shell history.\n\nExamples:\n  $ svc login\n  $ svc login --with-key < key.txt\n  $ printenv NEW_KEY | svc login --with-key --profile ci',
    )
    .action(app.action(run));
}

const FORMAT_HINT = 'API keys are sk_ followed by 64 letters and digits.';

export async function run(ctx: Context, opts: LoginOptions): Promise<void> {
  const apiKey = opts.withKey ? (await readAll(ctx.io.stdin)).trim() : await askKey(ctx);
  if (!isWellFormedKey(apiKey)) throw new UsageError(`That is not an API key. ${FORMAT_HINT}`);

  const { url, source } = await ctx.resolveBaseUrl();
  const client = await ctx.client({ apiKey, source: 'login' });
  await client.listKeys();

  const config = await ctx.config();
  const profile = config.getProfile(ctx.profileName);
  // An address given for this login is remembered with the key it was checked against.
  config.setProfile(ctx.profileName, { ...profile, apiKey, baseUrl: source === 'profile' || source === 'default' ? profile.baseUrl : url });
  ctx.msg.success(`Logged in to ${url} with ${keyHint(apiKey)}; saved to profile '${ctx.profileName}' (${config.path}).`);
  if (ctx.globals.json) printJson(ctx.io, { profile: ctx.profileName, baseUrl: url, key: { hint: keyHint(apiKey) }, config: config.path });
  if (ctx.io.env.SVC_API_KEY) {
    ctx.msg.warn('SVC_API_KEY is set in this environment and takes precedence over the saved key.');
  }
}

async function askKey(ctx: Context): Promise<string> {
  if (!ctx.canPrompt) {
    throw new UsageError('No key given: pipe it in with `svc login --with-key`, or run `svc login` on a terminal.');
  }
  const prompts = await ctx.prompts();
  return (await prompts.secret('API key:', (v) => (isWellFormedKey(v.trim()) ? true : FORMAT_HINT))).trim();
}
