import { isatty } from 'node:tty';

/**
 * Everything a command may touch of the outside terminal. Commands receive
 * one of these instead of reaching for `process`, so tests can drive them
 * with plain streams.
 */
export interface IO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  stdinIsTTY: boolean;
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
  /** Colour allowed on each stream: a TTY and no NO_COLOR. */
  colorStdout: boolean;
  colorStderr: boolean;
  /** Terminal width for tables; 80 when unknown. */
  columns: number;
  env: NodeJS.ProcessEnv;
}

export function processIO(): IO {
  const noColor = Boolean(process.env.NO_COLOR);
  const stdoutIsTTY = Boolean(process.stdout.isTTY);
  const stderrIsTTY = Boolean(process.stderr.isTTY);
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    // Touching process.stdin builds a stream; most commands never read it.
    get stdin() {
      return process.stdin;
    },
    stdinIsTTY: isatty(0),
    stdoutIsTTY,
    stderrIsTTY,
    colorStdout: stdoutIsTTY && !noColor,
    colorStderr: stderrIsTTY && !noColor,
    get columns() {
      return process.stdout.columns || process.stderr.columns || 80;
    },
    env: process.env,
  };
}
