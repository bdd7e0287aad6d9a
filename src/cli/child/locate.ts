/**
 * Whether `svc run` can start COMMAND, asked before a key is made for it
 * (docs/contract.md §C10): `svc run --ephemeral -- nosuchcmd` must not
 * create and revoke a key to learn what the PATH already says. The look is
 * execvp's, over the PATH the command will be started with: a name with a
 * slash is a path; any other is looked for in each directory of PATH, an
 * empty entry being the working directory. A script's `#!` interpreter is
 * looked for too: one that is not there fails the start as the script
 * itself missing would.
 */
import { accessSync, closeSync, constants, openSync, readSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { readEnv } from '../terminal/environment.js';
import { CliError, type ExitCode } from '../errors/errors.js';
import { clip } from '../text/text.js';

/** Exit statuses of a command that could not be run, as env(1), nohup and timeout use them. */
export const NOT_FOUND = 127;
export const NOT_RUNNABLE = 126;

/** execvp's PATH when the environment has none (glibc's confstr(_CS_PATH)). */
const DEFAULT_PATH = '/bin:/usr/bin';

type Found = { state: 'runs'; path: string } | { state: 'none' } | { state: 'not runnable'; why: string };

/** Why COMMAND cannot be started, or null when it can (or when only starting it tells, on Windows). */
export function cannotStart(file: string, env: NodeJS.ProcessEnv, cwd: string): CliError | null {
  // Windows finds a command by PATHEXT and its own rules; there the start itself says.
  if (process.platform === 'win32') return null;
  const shown = `\`${clip(file, 200)}\``;
  const found = look(file, env, cwd);
  if (found.state === 'none') return new CliError(`Could not run ${shown}: no such command.`, NOT_FOUND as ExitCode);
  if (found.state === 'not runnable') return new CliError(`Could not run ${shown}: ${found.why}.`, NOT_RUNNABLE as ExitCode);
  const interpreter = interpreterOf(found.path);
  if (interpreter === null || !isAbsolute(interpreter)) return null;
  const runs = look(interpreter, env, cwd);
  if (runs.state === 'runs') return null;
  const why = runs.state === 'none' ? 'is not there' : runs.why.replace(/^it /, '');
  return new CliError(`Could not run ${shown}: its interpreter, ${clip(interpreter, 200)} (its #! line), ${why}.`, (runs.state === 'none' ? NOT_FOUND : NOT_RUNNABLE) as ExitCode);
}

function look(file: string, env: NodeJS.ProcessEnv, cwd: string): Found {
  if (file === '') return { state: 'none' };
  const candidates = file.includes('/') ? [file] : (readEnv(env, 'PATH') ?? DEFAULT_PATH).split(delimiter).map((dir) => join(dir === '' ? '.' : dir, file));
  let refused: Found = { state: 'none' };
  for (const candidate of candidates) {
    const path = isAbsolute(candidate) ? candidate : join(cwd, candidate);
    let directory: boolean;
    try {
      directory = statSync(path).isDirectory();
    } catch {
      continue;
    }
    if (directory) {
      refused = { state: 'not runnable', why: 'it is a directory' };
      continue;
    }
    try {
      accessSync(path, constants.X_OK);
      return { state: 'runs', path };
    } catch {
      refused = { state: 'not runnable', why: 'it is not executable (permission denied)' };
    }
  }
  return refused;
}

/** The interpreter a script's first line names (`#!/usr/bin/env node` names /usr/bin/env), or null for a file that has none. */
function interpreterOf(path: string): string | null {
  const head = Buffer.alloc(256);
  let read = 0;
  try {
    const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      read = readSync(fd, head, 0, head.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
  const text = head.subarray(0, read).toString('latin1');
  if (!text.startsWith('#!')) return null;
  return /^#!\s*(\S+)/.exec(text.split('\n')[0]!)?.[1] ?? null;
}
