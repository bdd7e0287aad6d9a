/**
 * Whether `svc run` can start COMMAND, asked before a key is made for it
 * (docs/contract.md §C10): `svc run --ephemeral -- nosuchcmd` must not
 * create and revoke a key to learn what the PATH already says. The look is
 * execvp's, over the PATH the command will be started with: a name with a
 * slash is a path; any other is looked for in each directory of PATH, an
 * empty entry being the working directory.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { readEnv } from '../environment.js';
import { CliError, type ExitCode } from '../errors.js';
import { clip } from '../render/text.js';

/** Exit statuses of a command that could not be run, as env(1), nohup and timeout use them. */
export const NOT_FOUND = 127;
export const NOT_RUNNABLE = 126;

/** execvp's PATH when the environment has none (glibc's confstr(_CS_PATH)). */
const DEFAULT_PATH = '/bin:/usr/bin';

/** Why COMMAND cannot be started, or null when it can (or when only starting it tells, on Windows). */
export function cannotStart(file: string, env: NodeJS.ProcessEnv, cwd: string): CliError | null {
  // Windows finds a command by PATHEXT and its own rules; there the start itself says.
  if (process.platform === 'win32') return null;
  const candidates = file.includes('/') ? [file] : (readEnv(env, 'PATH') ?? DEFAULT_PATH).split(delimiter).map((dir) => join(dir === '' ? '.' : dir, file));
  let found: 'none' | 'not runnable' = 'none';
  for (const candidate of candidates) {
    const path = isAbsolute(candidate) ? candidate : join(cwd, candidate);
    let isFile: boolean;
    try {
      isFile = statSync(path).isFile();
    } catch {
      continue;
    }
    try {
      if (!isFile) throw new Error('not a file');
      accessSync(path, constants.X_OK);
      return null;
    } catch {
      found = 'not runnable';
    }
  }
  return found === 'none'
    ? new CliError(`Could not run \`${clip(file, 200)}\`: no such command.`, NOT_FOUND as ExitCode)
    : new CliError(`Could not run \`${clip(file, 200)}\`: it is not an executable file (permission denied).`, NOT_RUNNABLE as ExitCode);
}
