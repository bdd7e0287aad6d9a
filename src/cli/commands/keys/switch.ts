/** `keys enable` and `keys disable`: one PATCH a key; a 204 is reported as done. */
import type { Command } from 'commander';
import { keysToActOn } from '../../dialogs/pick-key.js';
import { changeKeys, type ChangeRequest } from '../../operations/change-keys.js';
import { keysContext } from '../../operations/context.js';
import type { App } from '../../program/program.js';
import type { KeySession } from '../../session/session.js';
import { keyChangeView } from '../../views/key-changes.js';

export function register(keys: Command, app: App): void {
  keys
    .command('enable')
    .description('switch disabled keys back on (a no-op for a key that is on)')
    .argument('[ids...]', 'key ids, or names each of exactly one key (a pick-list is offered on a terminal when none is given)')
    .addHelpText('after', '\nExamples:\n  $ svc keys enable key_0123abcd\n  $ svc keys enable key_0123abcd key_4567efgh')
    .action(app.action('key', (session: KeySession, ids: string[]) => run(session, ids, true)));
  keys
    .command('disable')
    .description('switch keys off without revoking them (a no-op for a key that is off)')
    .argument('[ids...]', 'key ids, or names each of exactly one key (a pick-list is offered on a terminal when none is given)')
    .addHelpText('after', '\nExamples:\n  $ svc keys disable key_0123abcd\n  $ svc keys disable key_0123abcd key_4567efgh')
    .action(app.action('key', (session: KeySession, ids: string[]) => run(session, ids, false)));
}

/**
 * Each key in turn, like `keys revoke`: a key that is not there is reported
 * at the end (exit 4) after the others were switched; any other failure
 * stops there, naming the ids not tried.
 */
export async function run(session: KeySession, idArgs: string[], enabled: boolean): Promise<void> {
  const verb = enabled ? 'enable' : 'disable';
  const { ids } = await keysToActOn(session, idArgs, {
    command: verb,
    many: true,
    question: `Keys to ${verb}:`,
    // A key whose state the server does not say is offered either way.
    offered: { keep: (key) => key.enabled !== enabled, none: `Every key is already ${enabled ? 'enabled' : 'disabled'}.` },
  });
  const request: ChangeRequest = { change: verb, targets: { args: ids } };
  const view = keyChangeView(session, request, { command: verb });
  view.report(await changeKeys(keysContext(session), request, view.events));
}
