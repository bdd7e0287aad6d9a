import { Option, type Command } from 'commander';
import { profileContext } from '../../operations/context.js';
import { moveProfileKey } from '../../operations/profile.js';
import type { App } from '../../program/program.js';
import { clip } from '../../text/text.js';
import type { KeyStore } from '../../secret-store/saved-key.js';
import type { ProfileSession } from '../../session/session.js';

export function register(profile: Command, app: App): void {
  profile
    .command('move-key')
    .description("move a profile's saved key into the OS keyring, or back into the config file")
    .argument('<profile>', 'the profile (see `svc profile list`)')
    .addOption(new Option('--to <store>', 'where the key goes').choices(['keyring', 'file']).makeOptionMandatory())
    .addHelpText(
      'after',
      '\nThe key is written to its new place before the old one is removed, so a failure loses nothing: a keyring that is locked or cannot be reached changes nothing (exit 3). No request is made.\n\nExamples:\n  $ svc profile move-key default --to keyring\n  $ svc profile move-key work --to file',
    )
    .action(app.action('profile', run));
}

export async function run(session: ProfileSession, name: string, opts: { to: KeyStore }): Promise<void> {
  const moved = await moveProfileKey(profileContext(session), name, opts.to);
  const { render } = session;
  if (moved.from === moved.to) render.info(`Profile '${clip(name, 200)}' already keeps its key ${moved.hint} in ${moved.where}; nothing was changed.`);
  else render.success(`Moved ${moved.hint} of profile '${clip(name, 200)}' to ${moved.where}.`);
  if (session.options.json) render.json({ profile: name, key: { hint: moved.hint, store: moved.to }, moved: moved.from !== moved.to });
  if (moved.leftover) render.warn(...moved.leftover.lines);
}
