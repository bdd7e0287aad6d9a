import type { Command } from 'commander';
import { declareBranches, type Branch } from '../../program/branches.js';
import type { App } from '../../program/program.js';
import { register as registerList } from './list.js';
import { register as registerCreate } from './create.js';
import { register as registerRevoke } from './revoke.js';
import { register as registerSwitch } from './switch.js';
import { register as registerPing } from './ping.js';
import { register as registerRotate } from './rotate.js';
import { register as registerView } from './view.js';
import { register as registerPrune } from './prune.js';
import { register as registerAudit } from './audit.js';

/** The subcommands, in the help's order. */
const SUBCOMMANDS: readonly Branch[] = [
  { names: ['list', 'ls'], register: registerList },
  { names: ['view'], register: registerView },
  { names: ['create'], register: registerCreate },
  { names: ['revoke', 'rm'], register: registerRevoke },
  { names: ['enable', 'disable'], register: registerSwitch },
  { names: ['rotate'], register: registerRotate },
  { names: ['prune'], register: registerPrune },
  { names: ['audit'], register: registerAudit },
  { names: ['ping'], register: registerPing },
];

/** `words`: the command words after `keys`, when only the subcommand they name is declared (src/cli/program/branches.ts). */
export function register(program: Command, app: App, words?: readonly string[]): Command {
  const keys = program
    .command('keys')
    .description('list, view, create, rotate, revoke, enable, disable, prune and audit API keys')
    .addHelpText(
      'after',
      '\nWith no subcommand on a terminal, opens the interactive key manager.\n\nExamples:\n  $ svc keys list\n  $ svc keys create laptop\n  $ svc keys',
    );
  declareBranches(keys, app, SUBCOMMANDS, words);
  return keys;
}
