import type { Command } from 'commander';
import { profileContext } from '../operations/context.js';
import { logOut } from '../operations/profile.js';
import type { App } from '../program/program.js';
import { announceProfileFile, noSuchProfile, type ProfileSession } from '../session/session.js';
import { notLoggedIn, UnknownProfileError } from '../errors/errors.js';
import { readEnv } from '../terminal/environment.js';
import { stillDoes } from '../domain/key-state.js';

export function register(program: Command, app: App): void {
  program
    .command('logout')
    .description("forget the profile's saved key, in the config file or the OS keyring (the key itself is not revoked: `svc keys revoke` ends it)")
    .addHelpText(
      'after',
      '\nA key kept in the OS keyring is deleted from it too; if the keyring cannot be reached, the profile forgets the key all the same and svc says how to delete the entry (exit 3). With --json, prints the profile and the hint of the key removed (null when there was none).\n\nExamples:\n  $ svc logout\n  $ svc logout --profile ci',
    )
    .action(app.action('change', run));
}

export async function run(session: ProfileSession): Promise<void> {
  const { render, profileName } = session;
  announceProfileFile(session);
  // A profile that is not there was not logged out of: most likely a typo in its name.
  if (!session.profileExists) throw new UnknownProfileError([noSuchProfile(session), 'Nothing was changed (`svc profile list` shows each profile).']);
  const { hint, leftover, state } = await logOut(profileContext(session));
  if (hint === null) render.info(`${notLoggedIn(profileName)}; nothing to remove.`);
  // No ✓ while the key is still in the keyring: the error after it says why and how to delete it.
  else if (leftover) render.info(`Profile '${profileName}' no longer points at ${hint}, but the OS keyring still holds it.`);
  else render.success(`Removed ${hint} from profile '${profileName}'. The key ${stillDoes(state!)}.`);
  if (session.options.json) render.json({ profile: profileName, removed: hint === null ? null : { hint } });
  if (readEnv(session.io.env, 'SVC_API_KEY')) render.warn('SVC_API_KEY is still set in this environment; svc keeps using it.');
  if (leftover) throw leftover;
}
