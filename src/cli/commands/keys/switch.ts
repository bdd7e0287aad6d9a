/** `keys enable` and `keys disable`: one PATCH a key; a 204 is reported as done. */
import type { Command } from 'commander';
import { keysToActOn } from '../../dialogs/pick-key.js';
import { switchNamedKeys, unresolved, type KeysActedOn, type Switched } from '../../operations/keys.js';
import type { App } from '../../program/program.js';
import type { KeySession } from '../../session/session.js';
import { shown } from '../../views/keys.js';
import { showSwitched } from '../../views/switched.js';
import { notLookedUp, stoppableBetweenKeys, stoppedBetweenKeys } from '../../terminal/stop-between-keys.js';

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
  const { client, render, options } = session;
  // Each key is told as its change lands, so that a run stopped partway has told every key it changed;
  // --json prints one document for all of them, below.
  const { outcomes, notTried, byName, stoppedBy, unnamed } = await stoppableBetweenKeys<Switched, KeysActedOn<Switched>>(
    session.deps,
    render,
    enabled ? 'enabled' : 'disabled',
    (o) => o.state === 'done' && showSwitched(session, o.id, enabled, o.value, false),
    (watch) => switchNamedKeys(client, ids, enabled, watch),
  );
  const documents: unknown[] = [];
  const missing: string[] = [];
  let failure: unknown;
  for (const outcome of outcomes) {
    if (outcome.state === 'done') {
      documents.push(outcome.value.document);
    } else if (outcome.state === 'gone') {
      missing.push(outcome.id);
    } else {
      failure = outcome.error;
    }
  }
  if (options.json && documents.length > 0) render.json(ids.length === 1 ? documents[0] : documents);
  if (failure !== undefined) {
    if (notTried.length > 0) render.warn(`Not tried, after that failure: ${notTried.map(shown).join(', ')}.`);
    throw failure;
  }
  const problem = missing.length > 0 || (byName?.shared.size ?? 0) > 0 || (byName?.unsure.length ?? 0) > 0 ? await unresolved(client, missing, byName, verb) : null;
  if (stoppedBy) throw stoppedBetweenKeys(stoppedBy, notTried, [...notLookedUp(unnamed), ...(problem?.lines ?? [])]);
  if (problem) throw problem;
}
