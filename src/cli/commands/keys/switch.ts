/** `keys enable` and `keys disable`: one PATCH a key; a 204 is reported as done. */
import type { Command } from 'commander';
import { confirmDisableInUse, listForDisable } from '../../dialogs/key-changes.js';
import { keysToActOn } from '../../dialogs/pick-key.js';
import { idsNamedIn } from '../../operations/keys.js';
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
    .option('-y, --yes', 'disable the key svc is using without asking (it is asked about on a terminal, and refused off one)')
    .addHelpText(
      'after',
      '\nDisabling the key svc is using locks the session out, and enabling it again takes another key: without --yes svc reads the key list to tell, asks on a terminal, and refuses off one (exit 2). Other keys are disabled unasked.\n\nExamples:\n  $ svc keys disable key_0123abcd\n  $ svc keys disable key_0123abcd key_4567efgh',
    )
    .action(app.action('key', (session: KeySession, ids: string[], opts: { yes?: boolean }) => run(session, ids, false, opts)));
}

/**
 * Each key in turn, like `keys revoke`: a key that is not there is reported
 * at the end (exit 4) after the others were switched; any other failure
 * stops there, naming the ids not tried.
 */
export async function run(session: KeySession, idArgs: string[], enabled: boolean, opts: { yes?: boolean } = {}): Promise<void> {
  const verb = enabled ? 'enable' : 'disable';
  let { ids, list } = await keysToActOn(session, idArgs, {
    command: verb,
    many: true,
    yes: opts.yes,
    question: `Keys to ${verb}:`,
    // A key whose state the server does not say is offered either way.
    offered: { keep: (key) => key.enabled !== enabled, none: `Every key is already ${enabled ? 'enabled' : 'disabled'}.` },
  });
  if (!enabled && !opts.yes) {
    list ??= await listForDisable(session);
    if (list !== undefined) {
      // The question names the keys that will be disabled: a name is resolved to its key's id before it is asked.
      ids = await idsNamedIn(session.client, list, ids, verb);
      await confirmDisableInUse(session, ids, list);
    }
  }
  const request: ChangeRequest = { change: verb, targets: { args: ids }, list };
  const view = keyChangeView(session, request, { command: verb });
  view.report(await changeKeys(keysContext(session), request, view.events));
}
