/**
 * svc in-process: any command run through invoke(argv, io, deps) against a
 * real reference server started in this process (or a scripted transport),
 * with a fake sleep that moves a fake clock, so backoff and rate-limit waits
 * take no time. The results have the shape of the spawned helpers in
 * cli.ts (exit code, stdout and stderr without the final newline), so a test
 * moves between the tiers by its import alone.
 */
import { Readable, Writable } from 'node:stream';
import type { Deps } from '../../src/cli/terminal/deps.js';
import type { IO } from '../../src/cli/terminal/io.js';
import { invoke } from '../../src/cli/app/main.js';
import type { Plan } from '../../src/contract/plans.js';
import type { LocalServerReady } from '../../src/contract/types.js';
import { startServer, type ServerOptions } from '../../src/server/listen.js';
import { cleanEnv, useServer } from './env.js';
import { scriptedPrompter } from './prompter.js';
import { recordingReaper } from './reaper.js';
import { call } from './reference-server.mjs';

export { cleanEnv, tempConfigDir } from './env.js';
export { call, windowEndsIn } from './reference-server.mjs';

export interface RunOptions {
  /** What stdin holds; empty and at its end when not given. */
  input?: string;
  /** A terminal on stdin, stdout and stderr (colour off, as with NO_COLOR, unless `colour`). */
  tty?: boolean;
  /** Colour on both streams of the terminal: the codes svc itself adds. */
  colour?: boolean;
  columns?: number;
  rows?: number;
  /** Each of svc's sleeps moves this reference server's clock on too: a rate window then ends without waiting for it. */
  server?: { url: string; adminToken: string };
  deps?: Partial<Deps>;
  /** The working directory svc runs in (where it looks for a project's .svc-profile); the test process's by default. */
  cwd?: string;
  /** Given what svc subscribes to its stdout's reader going away (IO.onReaderGone), for the test to call; unset, the IO has none. */
  readerGone?: (subscribe: () => void) => void;
}

export interface RunResult {
  exitCode: number;
  /** The signal svc would die by once its output is flushed (bin/svc.js), as a spawned svc's result names it; null for an exit. */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Stdout and stderr as one text, in the order svc wrote them: what a terminal, or a CI log, shows. */
  both: string;
  /** Every sleep svc asked for, in milliseconds; none of them was slept. */
  slept: number[];
}

/** Runs one svc command in this process; the environment is cleanEnv's with `env` on top. */
export async function svc(args: string[], env: Record<string, string | undefined> = {}, options: RunOptions = {}): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  let both = '';
  const slept: number[] = [];
  let sleptMs = 0;
  const sink = (append: (text: string) => void) =>
    new Writable({
      decodeStrings: false,
      write(chunk, _encoding, done) {
        append(String(chunk));
        done();
      },
    });
  const tty = options.tty === true;
  const io: IO = {
    stdout: sink((text) => ((stdout += text), (both += text))),
    stderr: sink((text) => ((stderr += text), (both += text))),
    stdin: Readable.from(options.input === undefined ? [] : [Buffer.from(options.input)]),
    stdinIsTTY: tty,
    stdoutIsTTY: tty,
    stderrIsTTY: tty,
    colorStdout: tty && options.colour === true,
    colorStderr: tty && options.colour === true,
    columns: options.columns ?? 80,
    rows: options.rows ?? 24,
    env: Object.fromEntries(Object.entries(cleanEnv(env)).filter(([, value]) => value !== undefined)),
    cwd: options.cwd,
    ...(options.readerGone && {
      onReaderGone: (listener: (stream: 'stdout' | 'stderr') => void) => {
        options.readerGone!(() => listener('stdout'));
        return () => {};
      },
    }),
  };
  const { exitCode, signal } = await invoke(args, io, {
    now: () => Date.now() + sleptMs,
    sleep: async (ms) => {
      slept.push(ms);
      sleptMs += ms;
      if (options.server) await call(options.server.url, 'POST', '/_local/clock', options.server.adminToken, { advanceSeconds: ms / 1000 });
    },
    random: () => 0.5,
    // A slow request's progress line is drawn on the real clock; no test sees one unless it schedules it itself.
    schedule: () => () => {},
    // inquirer on a stream that is no terminal would wait for ever; a question nobody scripted fails the test instead.
    prompter: scriptedPrompter([]),
    // svc run's reaper would be a process of its own; in-process, one that only takes its orders.
    startReaper: recordingReaper().start,
    ...options.deps,
  });
  return { exitCode, signal, stdout: withoutFinalNewline(stdout), stderr: withoutFinalNewline(stderr), both, slept };
}

function withoutFinalNewline(text: string): string {
  return text.replace(/\r?\n$/, '');
}

export interface LocalServer extends LocalServerReady {
  stop(): Promise<void>;
}

/** A reference server in this process, on a free port, as `svc serve --local` starts it. */
export async function startLocalServer(options: { plan?: Plan } & Partial<ServerOptions> = {}): Promise<LocalServer> {
  const server = await startServer({ host: '127.0.0.1', port: 0, ...options });
  return { ...server.ready, stop: () => server.close() };
}

/** A reference server in this process and a config dir for one test file (env.ts's useServer). */
export function useLocalServer(options: { plan?: Plan } & Partial<ServerOptions> = {}) {
  return useServer(() => startLocalServer(options));
}
