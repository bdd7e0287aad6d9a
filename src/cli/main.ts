import type { Deps } from './deps.js';
import type { IO } from './io.js';

export { processIO } from './io.js';
export { ExitCode } from './errors.js';
export { restoreV8Flags } from '../client/wasm-tiering.js';

/**
 * Runs one `svc` invocation and returns its exit code; only bin/ exits.
 * `svc --version` (and `--version --json`) answers before the command tree (commander and every
 * command module) is even loaded: start-up time is a feature of a CLI.
 */
export async function main(argv: string[], io: IO, deps: Partial<Deps> = {}): Promise<number> {
  const version = argv.filter((arg) => arg === '--version' || arg === '-V').length;
  if (version === 1 && argv.every((arg) => arg === '--version' || arg === '-V' || arg === '--json')) {
    io.stdout.write(argv.includes('--json') ? `${JSON.stringify({ version: SVC_VERSION })}\n` : `${SVC_VERSION}\n`);
    return 0;
  }
  runModule = await import('./run.js');
  return runModule.run(argv, io, deps);
}

let runModule: typeof import('./run.js') | undefined;

/**
 * For bin/svc.js, when a signal no command waits through ends svc: under
 * --json, the one document stdout owes (docs/contract.md §C3), unless the
 * command already printed there. Null when there is nothing to print.
 */
export function signalDocument(signal: NodeJS.Signals): string | null {
  return runModule?.signalDocument(signal) ?? null;
}
