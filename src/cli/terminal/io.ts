import { closeSync, constants, fstatSync, openSync, realpathSync, statSync, writeSync, type Stats } from 'node:fs';
import type { Readable } from 'node:stream';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';
import { isatty, ReadStream } from 'node:tty';
import { readEnv } from './environment.js';
import { holdsSignal } from './held-signals.js';
import { STOPPING_SIGNALS } from '../errors/errors.js';
import { colourLevel, type ColourLevel } from '../text/colour.js';

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
  /** Colour allowed on each stream: a TTY, or FORCE_COLOR; never with NO_COLOR (text/colour.ts). */
  colorStdout: boolean;
  colorStderr: boolean;
  /** The colour level where colour is allowed (FORCE_COLOR=2 or 3); 1 when unset. */
  colorLevel?: ColourLevel;
  /** Terminal width for tables; 80 when unknown. */
  columns: number;
  /** Terminal height, for what fits on one screen; 24 when unknown. */
  rows: number;
  env: NodeJS.ProcessEnv;
  /** The working directory, where the look for a project's `.svc-profile` starts; unset means the process's. */
  cwd?: string;
  /**
   * How a person runs this svc again from the current directory: `svc`
   * when it was run by that name (installed, or through npx), else
   * `node <path of bin/svc.js>` (a clone, `npm start`). Unset means `svc`.
   */
  invokedAs?: string;
  /**
   * Told of each message the renderer writes on stderr (never a prompt or
   * data), on the interactive manager's terminal: its region says them
   * again once the screen they were said on is cleared (region.ts).
   */
  said?: (message: string) => void;
  /**
   * Resolves once everything written to stdout so far has been handed to
   * the system (for a pipe, taken by the kernel): with the error a write to
   * it met, or null. Unset: a stdout that cannot fail (tests' memory).
   */
  stdoutWritten?: () => Promise<Error | null>;
  /** The same for stderr: where svc's messages went, or did not (a log on a full disk). */
  stderrWritten?: () => Promise<Error | null>;
  /**
   * The first stop signal (SIGINT, SIGTERM, SIGHUP) that reached svc while
   * svc held it to finish what was in hand (an answer, the key in hand of a
   * batch, a revoke): a failure of that work still ends svc by it. A signal
   * svc did not hold ended it at once (bin/svc.js). Unset: none ever comes.
   */
  heldSignal?: () => NodeJS.Signals | null;
  /**
   * The man page this svc ships (man/svc.1 beside its bin/), which `man svc`
   * does not find when svc was not installed where man looks (npx, a
   * clone): the top-level help names it. Unset or null: none to name.
   */
  readonly manPage?: string | null;
  /**
   * Stdout is /dev/null, where a secret would be gone the moment it was
   * printed. A closed stdout (`>&-`) looks the same: Node opens /dev/null
   * in place of a closed fd 0, 1 or 2 before svc runs.
   */
  readonly stdoutDiscarded?: boolean;
  /**
   * Subscribes to the reader of stdout or stderr going away (EPIPE), which
   * otherwise ends svc at once with exit 141 (bin/svc.js). A command that
   * must stop cleanly rather than be cut off, svc serve, takes it over while
   * subscribed. Returns the unsubscribe. Unset: streams that never break.
   */
  onReaderGone?: (listener: (stream: 'stdout' | 'stderr') => void) => () => void;
  /**
   * Subscribes to the terminal's size changing (SIGWINCH, which Node turns
   * into stderr's 'resize'), for a screen drawn to fit it. Returns the
   * unsubscribe. Unset: a terminal whose size never changes.
   */
  onResize?: (listener: () => void) => () => void;
  /**
   * How to read a file named on the command line whose read could wait on
   * a person or a pipe: 'stdin' when it is this process's stdin (/dev/stdin,
   * /dev/fd/0, the terminal or pipe stdin is); a stream of its own for
   * another terminal (/dev/tty) or a pipe (a named pipe, a shell's `<(…)`);
   * null for anything else, to be read as a file. All are read on the event
   * loop, where Ctrl-C ends the wait: read as a file, a terminal holds a
   * worker thread until it sends end-of-file, a named pipe until a writer
   * opens it, and the exit that Ctrl-C asks for waits on that thread.
   * Unset: every path is a file (tests' memory).
   */
  readerOf?: (path: string) => NamedReader | null;
}

/** A path that is not read as a file (IO.readerOf); `id` is the same for every name of one terminal or pipe. */
export type NamedReader = 'stdin' | { stream: Readable; terminal: boolean; id: string };

export interface ProcessIO {
  io: IO;
  /** Resolves once everything written so far to stdout and stderr has been handed to the system. */
  flushed(): Promise<void>;
  /** Whether anything touched stdout yet (it is built for its first write): what bin/svc.js asks before it prints a signal's --json document. */
  stdoutTouched(): boolean;
  /**
   * Gives the terminal back as svc found it, before svc dies by a signal: a
   * prompt's raw mode, which Node restores on its way out only when it
   * exits, or dies by a signal no listener ever took; the cursor a list
   * hides. Nothing when no prompt has the terminal.
   */
  restoreTerminal(): void;
}

/**
 * The process's own terminal. Node builds process.stdout and process.stderr
 * on first touch, which costs start-up, so each is touched only when a
 * command writes to it; `onError` is attached to each as it is built (EPIPE
 * when the reader has gone, ENOSPC on a full disk), and only those built
 * need flushing. A stream keeps the error its write met (`errored`), which
 * `stdoutWritten` gives to whoever must know the data arrived.
 */
export function processIO(onError: (error: NodeJS.ErrnoException) => void): ProcessIO {
  const stdoutIsTTY = isatty(1);
  const stderrIsTTY = isatty(2);
  const level = (isTTY: boolean) => colourLevel(readEnv(process.env, 'NO_COLOR'), readEnv(process.env, 'FORCE_COLOR'), isTTY);
  const stdoutLevel = level(stdoutIsTTY);
  const stderrLevel = level(stderrIsTTY);
  const opened: NodeJS.WriteStream[] = [];
  const readerGone = new Set<(stream: 'stdout' | 'stderr') => void>();
  const failed = (name: 'stdout' | 'stderr') => (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' && readerGone.size > 0) for (const listener of [...readerGone]) listener(name);
    else onError(error);
  };
  const open = (name: 'stdout' | 'stderr', stream: () => NodeJS.WriteStream) => {
    let built: NodeJS.WriteStream | undefined;
    return () => {
      if (!built) {
        built = stream();
        built.on('error', failed(name));
        opened.push(built);
      }
      return built;
    };
  };
  let stdoutBuilt = false;
  const stdout = open('stdout', () => {
    stdoutBuilt = true;
    return process.stdout;
  });
  const stderr = open('stderr', () => process.stderr);
  let stdinBuilt = false;
  let held: NodeJS.Signals | null = null;
  for (const signal of STOPPING_SIGNALS) {
    process.on(signal, () => {
      if (holdsSignal(signal)) held ??= signal;
    });
  }
  const io: IO = {
    get stdout() {
      return stdout();
    },
    get stderr() {
      return stderr();
    },
    // Touching process.stdin builds a stream; most commands never read it.
    get stdin() {
      stdinBuilt = true;
      return process.stdin;
    },
    stdinIsTTY: isatty(0),
    stdoutIsTTY,
    stderrIsTTY,
    colorStdout: stdoutLevel > 0,
    colorStderr: stderrLevel > 0,
    colorLevel: (Math.max(stdoutLevel, stderrLevel) || 1) as ColourLevel,
    get columns() {
      return (stdoutIsTTY && process.stdout.columns) || (stderrIsTTY && process.stderr.columns) || 80;
    },
    get rows() {
      return (stderrIsTTY && process.stderr.rows) || (stdoutIsTTY && process.stdout.rows) || 24;
    },
    readerOf,
    // Asked only before a secret is printed: two system calls no other command pays.
    get stdoutDiscarded() {
      return isNullDevice(1);
    },
    // Not built yet: nothing was written to it, so nothing failed.
    stdoutWritten: () => (opened.includes(process.stdout) ? written(process.stdout) : Promise.resolve(null)),
    stderrWritten: () => (opened.includes(process.stderr) ? written(process.stderr) : Promise.resolve(null)),
    heldSignal: () => held,
    env: process.env,
    invokedAs: invocation(process.argv[1], workingDirectory()),
    // Asked only by the top-level help.
    get manPage() {
      return shippedManPage(process.argv[1]);
    },
    onReaderGone(listener) {
      readerGone.add(listener);
      return () => readerGone.delete(listener);
    },
    onResize(listener) {
      const tty = stderrIsTTY ? stderr() : stdoutIsTTY ? stdout() : null;
      // Each stream learns its new size from its own SIGWINCH listener: told on the next turn, `columns` reads every
      // stream's new size, not stdout's old one (stderr's listener may run first).
      const later = () => setImmediate(listener);
      tty?.on('resize', later);
      return () => tty?.off('resize', later);
    },
  };
  // An empty write's callback runs once everything queued before it is flushed.
  const flushed = () => Promise.all(opened.map((s) => new Promise<void>((resolve) => s.write('', () => resolve())))).then(() => {});
  const restoreTerminal = () => {
    const stdin = stdinBuilt ? process.stdin : null;
    if (!(stdin instanceof ReadStream) || !stdin.isRaw) return;
    stdin.setRawMode(false);
    // Written at once: the process ends before a stream's write would be done.
    if (stderrIsTTY) writeSync(2, `${SHOW_CURSOR}\n`);
  };
  return { io, flushed, stdoutTouched: () => stdoutBuilt, restoreTerminal };
}

const SHOW_CURSOR = '\x1b[?25h';

/**
 * What became of everything written to `stream`: once handed to the system,
 * the error a write met (kept by the stream itself), or null.
 */
function written(stream: NodeJS.WriteStream): Promise<Error | null> {
  return new Promise((resolve) => {
    const settle = () => resolve(stream.errored ?? (stream.destroyed ? new Error('stdout was closed') : null));
    if (stream.errored || stream.destroyed) settle();
    else stream.write('', settle);
  });
}

function isNullDevice(fd: number): boolean {
  try {
    const stat = fstatSync(fd);
    return stat.isCharacterDevice() && stat.rdev === statSync('/dev/null').rdev;
  } catch {
    return false;
  }
}

function readerOf(path: string): NamedReader | null {
  let named: Stats;
  try {
    named = statSync(path);
  } catch {
    return null;
  }
  // A regular file is read whole from its start, even when it is stdin; a directory is refused as one.
  if (named.isFile() || named.isDirectory()) return null;
  try {
    const stdin = fstatSync(0);
    if (named.dev === stdin.dev && named.ino === stdin.ino) return 'stdin';
  } catch {
    // No stdin at all: the path is not it.
  }
  const id = `${named.dev}:${named.ino}`;
  if (named.isFIFO()) return pipeReader(path, id);
  if (!named.isCharacterDevice()) return null;
  let fd: number | undefined;
  try {
    // Not blocking: a device may wait in open(2) itself (a serial line for its carrier); not taking the
    // terminal as svc's controlling one, should svc have none.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    if (isatty(fd)) return { stream: new ReadStream(fd), terminal: true, id };
  } catch {
    // Read as a file, which says why it cannot be.
  }
  if (fd !== undefined) closeSync(fd);
  return null;
}

/**
 * A pipe by its name. Opened without waiting, where open(2) would wait for
 * a writer; read on the event loop, which waits for the writer's data and
 * its end (Linux reports a pipe's hang-up only once a writer has come).
 */
function pipeReader(path: string, id: string): NamedReader | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  // Loaded here: only a pipe named on the command line needs a socket of its own.
  const { Socket } = process.getBuiltinModule('node:net');
  return { stream: new Socket({ fd, readable: true, writable: false }), terminal: false, id };
}

/** The process's working directory; undefined once it has been removed, where no project can be and no path is relative to it. */
export function workingDirectory(): string | undefined {
  try {
    return process.cwd();
  } catch {
    return undefined;
  }
}

/**
 * How to run the script at `script` again from `cwd`: by name when it was
 * run through its `svc` link on the PATH (or npx's), else with node and its
 * path, relative when it lies under `cwd` (`node bin/svc.js` in a clone).
 */
/** man/svc.1 of the package whose bin/svc.js `script` is (through npm's link in .bin too), if it is there. */
function shippedManPage(script: string | undefined): string | null {
  if (!script) return null;
  try {
    const page = join(dirname(dirname(realpathSync(script))), 'man', 'svc.1');
    return statSync(page).isFile() ? page : null;
  } catch {
    return null;
  }
}

export function invocation(script: string | undefined, cwd: string | undefined): string {
  if (!script || basename(script) === 'svc') return 'svc';
  const below = cwd === undefined ? '' : relative(cwd, script);
  const path = below !== '' && !below.startsWith('..') && !isAbsolute(below) ? below : script;
  return `node ${/^[\w./@%+=:,-]+$/.test(path) ? path : `'${path.replace(/'/g, "'\\''")}'`}`;
}
