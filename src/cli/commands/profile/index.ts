import type { Command } from 'commander';
import { declareBranches, type Branch } from '../../program/branches.js';
import type { App } from '../../program/program.js';
import { register as registerList } from './list.js';
import { register as registerUse } from './use.js';
import { register as registerRemove } from './remove.js';
import { register as registerMoveKey } from './move-key.js';

/** The subcommands, in the help's order. */
const SUBCOMMANDS: readonly Branch[] = [
  { names: ['list', 'ls'], register: registerList },
  { names: ['use'], register: registerUse },
  { names: ['remove', 'rm'], register: registerRemove },
  { names: ['move-key'], register: registerMoveKey },
];

/** `words`: the command words after `profile`, when only the subcommand they name is declared (src/cli/program/branches.ts). */
export function register(program: Command, app: App, words?: readonly string[]): Command {
  const profile = program
    .command('profile')
    .description('list the saved profiles, choose the default one, remove one, move its key into the OS keyring')
    .addHelpText(
      'after',
      '\nA profile is a saved key and the address it was saved for; `svc login --profile NAME` makes one. Its key is kept in the config file, or in the OS keyring after `svc login --keyring` or `svc profile move-key NAME --to keyring`. The profile svc uses: --profile, else SVC_PROFILE, else the default one (`svc profile use`), else `default`.\n\nExamples:\n  $ svc profile list\n  $ svc profile use work\n  $ svc profile move-key work --to keyring\n  $ svc profile remove old-laptop',
    );
  declareBranches(profile, app, SUBCOMMANDS, words);
  return profile;
}
