import type { Command } from 'commander';
import type { Context } from '../../context.js';
import type { App } from '../../program.js';
import { setEnabled } from '../../keys.js';

export function register(keys: Command, app: App): void {
  keys
    .command('disable')
    .description('switch a key off without revoking it (a no-op when it is off)')
    .argument('<id>', 'key id')
    .addHelpText('after', '\nExample:\n  $ svc keys disable key_0123abcd')
    .action(app.action(run));
}

export async function run(ctx: Context, id: string): Promise<void> {
  await setEnabled(ctx, id, false);
}
