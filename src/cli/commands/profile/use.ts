import type { Command } from 'commander';
import { profileContext } from '../../operations/context.js';
import { useProfile } from '../../operations/profile.js';
import type { App } from '../../program/program.js';
import { readEnv } from '../../terminal/environment.js';
import { clip } from '../../text/text.js';
import type { ProfileSession } from '../../session/session.js';

export function register(profile: Command, app: App): void {
  profile
    .command('use')
    .description("make a profile the default: the one used without --profile, SVC_PROFILE or a project's .svc-profile")
    .argument('<profile>', 'the profile (see `svc profile list`)')
    .addHelpText('after', '\nSaved in the config file, for every svc run by your user.\n\nExamples:\n  $ svc profile use work\n  $ svc profile use default')
    .action(app.action('profile', run));
}

export async function run(session: ProfileSession, name: string): Promise<void> {
  const { configPath } = await useProfile(profileContext(session), name);
  const { render } = session;
  render.success(`Profile '${clip(name, 200)}' is now the default (saved in ${configPath}).`);
  if (session.options.json) render.json({ default: name, config: configPath });
  const fromEnv = readEnv(session.io.env, 'SVC_PROFILE');
  if (fromEnv && fromEnv !== name) render.warn(`SVC_PROFILE is set to '${clip(fromEnv, 200)}' in this environment, and wins over the default.`);
  else if (session.profileFile !== null && session.profileName !== name) {
    render.warn(`Here ${session.profileFile} names '${clip(session.profileName, 200)}', and wins over the default.`);
  }
}
