/** `keys enable` and `keys disable`: one PATCH each; a 204 is reported as done. */
import type { Command } from 'commander';
import { checkKeyId } from '../../keys.js';
import { setEnabled } from '../../operations/keys.js';
import type { App } from '../../program.js';
import type { KeySession } from '../../session.js';
import { showSwitched } from '../../views/switched.js';

export function register(keys: Command, app: App): void {
  keys
    .command('enable')
    .description('switch a disabled key back on (a no-op when it is on)')
    .argument('<id>', 'key id')
    .addHelpText('after', '\nExample:\n  $ svc keys enable key_0123abcd')
    .action(app.action('key', (session: KeySession, id: string) => run(session, id, true)));
  keys
    .command('disable')
    .description('switch a key off without revoking it (a no-op when it is off)')
    .argument('<id>', 'key id')
    .addHelpText('after', '\nExample:\n  $ svc keys disable key_0123abcd')
    .action(app.action('key', (session: KeySession, id: string) => run(session, id, false)));
}

export async function run(session: KeySession, idArg: string, enabled: boolean): Promise<void> {
  const id = checkKeyId(idArg);
  showSwitched(session, id, enabled, await setEnabled(session.client, id, enabled));
}
