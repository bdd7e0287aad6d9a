import { Chalk } from 'chalk';
import Table from 'cli-table3';
import { PassThrough } from 'node:stream';
import type { IO } from '../../src/cli/terminal/io.js';
import type { TerminalLibraries } from '../../src/cli/terminal/renderer.js';

/** Both of what a renderer may need, for one made by hand over a memory IO that claims a terminal. */
export const terminalLibraries: TerminalLibraries = { Chalk, Table };

/** An IO over in-memory streams, with what was written readable as text. */
export function memoryIO(overrides: Partial<IO> = {}) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: string[] = [];
  const err: string[] = [];
  stdout.on('data', (c) => out.push(String(c)));
  stderr.on('data', (c) => err.push(String(c)));
  const io: IO = {
    stdout,
    stderr,
    stdin: new PassThrough(),
    stdinIsTTY: false,
    stdoutIsTTY: false,
    stderrIsTTY: false,
    colorStdout: false,
    colorStderr: false,
    columns: 80,
    rows: 24,
    env: {},
    ...overrides,
  };
  return { io, stdout: () => out.join(''), stderr: () => err.join('') };
}
