import type { Command } from 'commander';
import { profileContext } from '../../operations/context.js';
import { removeProfile } from '../../operations/profile.js';
import type { App } from '../../program/program.js';
import { clip } from '../../text/text.js';
import type { ProfileSession } from '../../session/session.js';
import { stillDoes } from '../../domain/key-state.js';

export function register(profile: Command, app: App): void {
  profile
    .command('remove')
    .alias('rm')
    .description("forget a profile and its saved key, the OS keyring's entry included (the key itself is not revoked: `svc keys revoke` ends it)")
    .argument('<profile>', 'the profile (see `svc profile list`)')
    .addHelpText('after', '\nExamples:\n  $ svc profile remove old-laptop')
    .action(app.action('profile', run));
}

export async function run(session: ProfileSession, name: string): Promise<void> {
  const { hint, wasDefault, leftover, state } = await removeProfile(profileContext(session), name);
  const { render } = session;
  const key = hint === null ? 'it had no saved key' : `its key ${hint} ${stillDoes(state!)}`;
  if (leftover) render.info(`Removed profile '${clip(name, 200)}', but the OS keyring still holds its key ${hint}.`);
  else render.success(`Removed profile '${clip(name, 200)}'; ${key}.`);
  if (wasDefault) render.info("'default' is the default profile again (`svc profile use NAME` changes it).");
  if (session.options.json) render.json({ profile: name, removed: hint === null ? null : { hint }, defaultProfile: wasDefault ? 'default' : undefined });
  if (leftover) throw leftover;
}
