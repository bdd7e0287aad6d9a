import { CliError, type ExitCode } from './errors.js';

/** Keys found: its own exit code, never read as svc failing (docs/contract.md §C5). */
export class KeysFoundError extends CliError {
  constructor(lines: readonly string[], exitCode: ExitCode) {
    super(lines, exitCode);
    this.name = 'KeysFoundError';
  }
}
