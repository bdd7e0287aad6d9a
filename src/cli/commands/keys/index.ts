import type { Command } from 'commander';
import type { App } from '../../program.js';
import { register as registerList } from './list.js';
import { register as registerCreate } from './create.js';
import { register as registerRevoke } from './revoke.js';
import { register as registerSwitch } from './switch.js';
import { register as registerPing } from './ping.js';
import { register as registerRotate } from './rotate.js';
import { register as registerView } from './view.js';
import { register as registerPrune } from './prune.js';
import { register as registerAudit } from './audit.js';

export function register(program: Command, app: App): Command {
  const keys = program
    .command('keys')
    .description('list, view, create, rotate, revoke, enable, disable, prune and audit API keys')
    .addHelpText(
      'after',
      '\nWith no subcommand on a terminal, opens the interactive key manager.\n\nExamples:\n  $ svc keys list\n  $ svc keys create laptop\n  $ svc keys',
    );
  registerList(keys, app);
  registerView(keys, app);
  registerCreate(keys, app);
  registerRevoke(keys, app);
  registerSwitch(keys, app);
  registerRotate(keys, app);
  registerPrune(keys, app);
  registerAudit(keys, app);
  registerPing(keys, app);
  return keys;
}
