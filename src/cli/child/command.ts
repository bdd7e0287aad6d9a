/**
 * `svc run`'s COMMAND (docs/contract.md §C10): started without a shell, in
 * a process group of its own so that a signal svc forwards reaches what it
 * started too; its output either straight to svc's terminal or through svc
 * (masked, where a stream is no terminal).
 */
import { spawn } from 'node:child_process';
import type { Transform } from 'node:stream';
import type { Deps } from '../deps.js';
import { CliError, type ExitCode } from '../errors.js';
import { clip } from '../render/text.js';

export interface ChildPlan {
  words: readonly string[];
  env: NodeJS.ProcessEnv;
  /** Where COMMAND's stdout and stderr go through svc; null: COMMAND writes to svc's own (a terminal) itself. */
  stdout: NodeJS.WritableStream | null;
  stderr: NodeJS.WritableStream | null;
  /** What each stream passing through svc goes through on the way (the masking), if anything. */
  filter: (() => Transform) | null;
  schedule: Deps['schedule'];
}

/** How COMMAND ended: its exit code, or the signal that ended it. */
export interface ChildEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunningChild {
  ended: Promise<ChildEnd>;
  /** Sends `signal` to COMMAND's process group (on Windows, to COMMAND). */
  signal(signal: NodeJS.Signals): void;
  /** Stops reading COMMAND's output (its reader went away): what it writes next meets a closed pipe. */
  stopPassing(): void;
}

/**
 * Output written before COMMAND exited is taken for this long after, when
 * something it started in the background still holds its output open: svc
 * does not wait for that, nor pass on what it prints later.
 */
const DRAIN_MS = 200;

/** Exit statuses of a command that could not be run, as env(1), nohup and timeout use them. */
const NOT_FOUND = 127;
const NOT_RUNNABLE = 126;

export function startChild(plan: ChildPlan): RunningChild {
  const [file, ...args] = plan.words as [string, ...string[]];
  const group = process.platform !== 'win32';
  const child = spawn(file, args, {
    env: plan.env,
    stdio: ['inherit', plan.stdout === null ? 'inherit' : 'pipe', plan.stderr === null ? 'inherit' : 'pipe'],
    detached: group,
    windowsHide: true,
  });
  const outputs = [
    [child.stdout, plan.stdout],
    [child.stderr, plan.stderr],
  ].flatMap(([from, to]) => (from && to ? [pass(from as NodeJS.ReadableStream & { destroy(): void }, to as NodeJS.WritableStream, plan.filter)] : []));

  const ended = new Promise<ChildEnd>((resolve, reject) => {
    child.on('error', (error: NodeJS.ErrnoException) => {
      const missing = error.code === 'ENOENT';
      reject(
        new CliError(
          `Could not run \`${clip(file, 200)}\`: ${missing ? 'no such command' : clip(error.message, 200)}.`,
          (missing ? NOT_FOUND : NOT_RUNNABLE) as ExitCode,
        ),
      );
    });
    child.on('exit', (code, signal) => {
      const drained = Promise.all(outputs.map((output) => output.done));
      const cancel = plan.schedule(DRAIN_MS, () => {
        for (const output of outputs) output.cut();
      });
      void drained.then(() => {
        cancel();
        resolve({ code, signal });
      });
    });
  });

  return {
    ended,
    stopPassing() {
      for (const output of outputs) output.drop();
    },
    signal(signal) {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      try {
        if (group) process.kill(-child.pid, signal);
        else child.kill(signal);
      } catch {
        // The group is gone already: nothing is left to tell.
      }
    },
  };
}

interface Passing {
  /** Resolves once what came has gone on (through the filter, if any), or was dropped. */
  done: Promise<void>;
  /** Stops reading: what is still to come is not passed on; what was read still is. */
  cut(): void;
  /** Stops passing anything on: there is no one left to read it. */
  drop(): void;
}

function pass(from: NodeJS.ReadableStream & { destroy(): void }, to: NodeJS.WritableStream, filter: (() => Transform) | null): Passing {
  const through = filter?.() ?? null;
  const last = through ?? from;
  if (through) from.pipe(through);
  last.pipe(to, { end: false });
  const done = new Promise<void>((resolve) => {
    for (const event of ['end', 'close', 'error']) last.once(event, () => resolve());
  });
  return {
    done,
    cut() {
      from.unpipe();
      from.destroy();
      through?.end();
    },
    drop() {
      from.destroy();
      through?.destroy();
    },
  };
}
