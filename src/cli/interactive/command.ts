import type { Command } from 'commander';
import type { Context } from '../context.js';
import type { App } from '../program.js';
import { unknownCommand } from '../suggest.js';

/**
 * `svc` and `svc keys` with no subcommand: the interactive key manager on a
 * terminal; elsewhere help on stderr and exit 2, never a wait for input.
 */
export function register(program: Command, keys: Command, app: App): void {
  for (const command of [program, keys]) {
    // Commander's own check would call a typo "too many arguments".
    command.allowExcessArguments(true).action(
      app.action(async (ctx: Context) => {
        if (command.args.length > 0) unknownCommand(command, command.args);
        if (!ctx.canPrompt) command.help({ error: true });
        const { runSession } = await import('./session.js');
        await runSession(ctx);
      }),
    );
  }
}
