import { jsonAsked } from '../program/argv.js';
import type { Deps } from '../terminal/deps.js';
import { signalExitCode, stoppedBeforeDone } from '../errors/errors.js';
import type { IO } from '../terminal/io.js';
import type { Leftovers } from '../child/reap.js';
import type { Ending } from '../views/failure.js';

export { processIO } from '../terminal/io.js';
export { ExitCode } from '../errors/errors.js';
export { holdsSignal } from '../terminal/held-signals.js';
export { restoreV8Flags } from '../../client/v8-flags.js';

/**
 * Runs one `svc` invocation and returns how it is to end: the exit code,
 * and the signal svc is to die by when one stopped the command (bin/svc.js
 * re-raises it, so that a shell loop stops as well); only bin/ exits.
 * `svc --version` (and `--version --json`) answers before the command tree (commander and every
 * command module) is even loaded: start-up time is a feature of a CLI.
 */
export async function invoke(argv: string[], io: IO, deps: Partial<Deps> = {}): Promise<Ending> {
  const version = argv.filter((arg) => arg === '--version' || arg === '-V').length;
  if (version === 1 && argv.every((arg) => arg === '--version' || arg === '-V' || arg === '--json')) {
    io.stdout.write(argv.includes('--json') ? `${JSON.stringify({ version: SVC_VERSION })}\n` : `${SVC_VERSION}\n`);
    return { exitCode: 0, signal: null };
  }
  const { run } = await import('./run.js');
  return run(argv, io, deps);
}

/** invoke's exit code alone: what `$?` shows, whether svc exits with it or dies by the signal. */
export async function main(argv: string[], io: IO, deps: Partial<Deps> = {}): Promise<number> {
  return (await invoke(argv, io, deps)).exitCode;
}

/**
 * For bin/svc.js, when a signal no command waits through ends svc with
 * nothing printed on stdout yet: under --json (given before `--`), the one
 * document stdout owes (docs/contract.md §C3), in the form of every other
 * failure's (docs/cli-error.schema.json); null otherwise.
 */
export function signalDocument(argv: readonly string[], signal: NodeJS.Signals): string | null {
  if (!jsonAsked(argv)) return null;
  return `${JSON.stringify({ error: { message: stoppedBeforeDone(signal), exitCode: signalExitCode(signal) } }, null, 2)}\n`;
}

/**
 * For bin/reap.js, svc's reaper, once svc ended before it was done with
 * its job: loaded only then, since the reaper of every other run never
 * needs it.
 */
export async function reap(left: Leftovers, io: IO): Promise<void> {
  await (await import('../child/reap.js')).reap(left, io);
}
