import type { Command } from 'commander';
import type { App } from '../program/program.js';
import { canPrompt } from '../session/session.js';
import { unknownCommand } from '../domain/suggest.js';

/**
 * `svc` and `svc keys` with no subcommand: the interactive key manager on a
 * terminal; elsewhere help on stderr and exit 2, never a wait for input.
 */
export function register(program: Command, keys: Command, app: App): void {
  for (const command of [program, keys]) {
    // Commander's own check would call a typo "too many arguments".
    command.allowExcessArguments(true).action(async () => {
      if (command.args.length > 0) unknownCommand(command, command.args);
      const options = app.options(command);
      if (!canPrompt(app.io, options)) command.help({ error: true });
      const { runManager } = await import('./manager.js');
      await runManager(app.io, options, app.deps);
    });
  }
}
