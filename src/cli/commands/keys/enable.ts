import type { Command } from 'commander';
import type { Context } from '../../context.js';
import type { App } from '../../program.js';
import { setEnabled } from '../../keys.js';

export function register(keys: Command, app: App): void {
  keys
    .command('enable')
    .description('switch a disabled key back on (a no-op when it is on)')
    .argument('<id>', 'key id')
    .addHelpText('after', '\nExample:\n  $ svc keys enable key_0123abcd')
    .action(app.action(run));
}

export async function run(ctx: Context, id: string): Promise<void> {
  await setEnabled(ctx, id, true);
}
