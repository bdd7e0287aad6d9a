import type { Command } from 'commander';
import { profileContext } from '../../operations/context.js';
import { listProfiles } from '../../operations/profile.js';
import type { App } from '../../program/program.js';
import { readEnv } from '../../terminal/environment.js';
import type { ProfileSession } from '../../session/session.js';
import { activeFrom, profileColumns, profilesDocument } from '../../views/profiles.js';

export function register(profile: Command, app: App): void {
  profile
    .command('list')
    .alias('ls')
    .description('list the profiles: which is the default, which this command would use, their keys and servers')
    .addHelpText('after', '\nReads the config file only; no request is made.\n\nExamples:\n  $ svc profile list\n  $ svc profile list --json | jq -r .default')
    .action(app.action('profile', run));
}

export async function run(session: ProfileSession): Promise<void> {
  const listing = listProfiles(profileContext(session));
  const { render, io, options } = session;
  if (options.json) return render.json(profilesDocument(listing, session.profileSource, session.profileFile));
  render.table(profileColumns(), listing.profiles);
  if (!io.stdoutIsTTY) return;
  render.info(`* the profile svc uses here (${activeFrom(session.profileSource, session.profileFile)}); saved in ${listing.configPath}`);
  if (readEnv(io.env, 'SVC_API_KEY')) render.warn("SVC_API_KEY is set in this environment: it overrides every profile's saved key.");
}
