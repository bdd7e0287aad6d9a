import type { Command } from 'commander';
import type { App } from '../../program.js';
import { register as registerList } from './list.js';
import { register as registerUse } from './use.js';
import { register as registerRemove } from './remove.js';
import { register as registerMoveKey } from './move-key.js';

export function register(program: Command, app: App): Command {
  const profile = program
    .command('profile')
    .description('list the saved profiles, choose the default one, remove one, move its key into the OS keyring')
    .addHelpText(
      'after',
      '\nA profile is a saved key and the address it was saved for; `svc login --profile NAME` makes one.\n' +
        'Its key is kept in the config file, or in the OS keyring after `svc login --keyring` or `svc profile move-key NAME --to keyring`.\n' +
        'The profile svc uses: --profile, else SVC_PROFILE, else the default one (`svc profile use`), else `default`.\n\n' +
        'Examples:\n  $ svc profile list\n  $ svc profile use work\n  $ svc profile move-key work --to keyring\n  $ svc profile remove old-laptop',
    );
  registerList(profile, app);
  registerUse(profile, app);
  registerRemove(profile, app);
  registerMoveKey(profile, app);
  return profile;
}
