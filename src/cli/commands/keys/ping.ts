import type { Command } from 'commander';
import type { App } from '../../program/program.js';
import type { KeySession } from '../../session/session.js';
import { showPing } from '../../views/ping.js';

export function register(keys: Command, app: App): void {
  keys
    .command('ping')
    .description('check that the key in use works (exit 0), or say why not')
    .addHelpText('after', '\nExamples:\n  $ svc keys ping\n  $ SVC_API_KEY=$KEY svc keys ping --quiet && echo ok')
    .action(app.action('key', run));
}

/** The spec's smoke test: GET /user/api-keys answers 200 for a valid, enabled key under its ceiling. */
export async function run(session: KeySession): Promise<void> {
  showPing(session, await session.client.probeKeyList());
}
