import type { Command } from 'commander';
import { keysToActOn } from '../../dialogs/pick-key.js';
import { viewKeyOrNamed } from '../../operations/keys.js';
import type { App } from '../../program/program.js';
import type { KeySession } from '../../session/session.js';
import { keyFields } from '../../views/keys.js';

export function register(keys: Command, app: App): void {
  keys
    .command('view')
    .description("show one key's record")
    .argument('[id]', 'key id, or the name of exactly one key (a pick-list is offered on a terminal when none is given)')
    .addHelpText('after', '\nExamples:\n  $ svc keys view key_0123abcd\n  $ svc keys view key_0123abcd --json | jq -r .expiresAt')
    .action(app.action('key', run));
}

export async function run(session: KeySession, idArg: string | undefined): Promise<void> {
  const { ids } = await keysToActOn(session, idArg === undefined ? [] : [idArg], { command: 'view', many: false, question: 'Key to view:' });
  const { document, view } = await viewKeyOrNamed(session.client, ids[0]!);
  if (session.options.json) return session.render.json(document);
  session.render.record(keyFields(view, session.client.serverNow(), session.client.keyHint));
}
