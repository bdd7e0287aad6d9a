import type { Command } from 'commander';
import type { Context } from '../context.js';
import type { App } from '../program.js';

/**
 * `svc` and `svc keys` with no subcommand: the interactive key manager on a
 * terminal; elsewhere help on stderr and exit 2, never a wait for input.
 */
export function register(program: Command, keys: Command, app: App): void {
  for (const command of [program, keys]) {
    // Commander's own check would call a typo "too many arguments".
    command.allowExcessArguments(true).action(
      app.action(async (ctx: Context) => {
        const [word] = command.args;
        if (word !== undefined) command.error(`error: unknown command '${word}'. See '${command.parent ? `${command.parent.name()} ` : ''}${command.name()} --help'.`);
        if (!ctx.canPrompt) command.help({ error: true });
        const { runSession } = await import('./session.js');
        await runSession(ctx);
      }),
    );
  }
}
