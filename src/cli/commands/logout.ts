import type { Command } from 'commander';
import { keyHint } from '../../contract/key-format.js';
import type { Context } from '../context.js';
import { printJson } from '../output.js';
import type { App } from '../program.js';

export function register(program: Command, app: App): void {
  program
    .command('logout')
    .description("forget the profile's saved key (the key itself stays valid; revoke it to kill it)")
    .addHelpText('after', '\nWith --json, prints the profile and the hint of the key removed (null when there was none).\n\nExamples:\n  $ svc logout\n  $ svc logout --profile ci')
    .action(app.action(run));
}

export async function run(ctx: Context): Promise<void> {
  const config = await ctx.config();
  const { apiKey, ...rest } = config.getProfile(ctx.profileName);
  if (!apiKey) ctx.msg.info(`Profile '${ctx.profileName}' has no saved key.`);
  else {
    config.setProfile(ctx.profileName, rest);
    ctx.msg.success(`Removed ${keyHint(apiKey)} from profile '${ctx.profileName}'. The key still works until revoked.`);
  }
  if (ctx.globals.json) printJson(ctx.io, { profile: ctx.profileName, removed: apiKey ? { hint: keyHint(apiKey) } : null });
  if (ctx.io.env.SVC_API_KEY) ctx.msg.warn('SVC_API_KEY is still set in this environment; svc keeps using it.');
}
