/**
 * `svc run`'s COMMAND (docs/contract.md §C10): started without a shell, in
 * a process group of its own so that a signal svc forwards reaches what it
 * started too, and so that svc can end that whole group; its output either
 * straight to svc's terminal or through svc (masked, where a stream is no
 * terminal).
 */
import { spawn } from 'node:child_process';
import type { Transform } from 'node:stream';
import type { Deps } from '../terminal/deps.js';
import { CliError, type ExitCode } from '../errors/errors.js';
import { clip } from '../text/text.js';
import { NOT_FOUND, NOT_RUNNABLE } from './locate.js';
import { jobAlive, signalJob } from './session.js';

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

/** Output of COMMAND that svc could not pass on: where it was going, and the error that stopped it there. */
export interface LostOutput {
  stream: 'stdout' | 'stderr';
  error: Error;
}

/** How COMMAND ended: its exit code, or the signal that ended it; and what of its output svc could not pass on. */
export interface ChildEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  lost: LostOutput[];
}

export interface RunningChild {
  /** COMMAND's process id, which is also its process group's (on Windows, only its own). */
  pid: number | undefined;
  ended: Promise<ChildEnd>;
  /** Sends `signal` to COMMAND's process group and the rest of its session, what COMMAND left running included (on Windows, to COMMAND). */
  signal(signal: NodeJS.Signals): void;
  /** Whether any process is left of COMMAND's job (its process group, and its session's other members): COMMAND itself or what it started. */
  groupAlive(): boolean;
  /** Stops reading COMMAND's output on `stream`, whose reader went away: what it writes there next meets a closed pipe. */
  stopPassing(stream: 'stdout' | 'stderr'): void;
}

/**
 * Output written before COMMAND exited is taken for this long after, when
 * something it started in the background still holds its output open: svc
 * does not wait for that, nor pass on what it prints later.
 */
const DRAIN_MS = 200;

const group = process.platform !== 'win32';

export function startChild(plan: ChildPlan): RunningChild {
  const [file, ...args] = plan.words as [string, ...string[]];
  const child = spawn(file, args, {
    env: plan.env,
    stdio: ['inherit', plan.stdout === null ? 'inherit' : 'pipe', plan.stderr === null ? 'inherit' : 'pipe'],
    detached: group,
    windowsHide: true,
  });
  const outputs = (
    [
      ['stdout', child.stdout, plan.stdout],
      ['stderr', child.stderr, plan.stderr],
    ] as const
  ).flatMap(([name, from, to]) => (from && to ? [pass(name, from, to, plan.filter)] : []));

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
        resolve({ code, signal, lost: outputs.flatMap((output) => (output.lost() === null ? [] : [output.lost()!])) });
      });
    });
  });

  return {
    pid: child.pid,
    ended,
    stopPassing(stream) {
      for (const output of outputs) if (output.name === stream) output.drop();
    },
    signal(signal) {
      if (child.pid === undefined) return;
      if (group) signalJob(child.pid, signal);
      else if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    groupAlive() {
      if (child.pid === undefined) return false;
      if (!group) return child.exitCode === null && child.signalCode === null;
      return jobAlive(child.pid);
    },
  };
}

interface Passing {
  name: 'stdout' | 'stderr';
  /** Resolves once what came has gone on (through the filter, if any), or was dropped. */
  done: Promise<void>;
  /** Stops reading: what is still to come is not passed on; what was read still is. */
  cut(): void;
  /** Stops passing anything on: there is no one left to read it. */
  drop(): void;
  /** The error svc's own stream met (a full disk), after which COMMAND's output there is read and let go; null while none. */
  lost(): LostOutput | null;
}

/**
 * COMMAND's `name` stream on to svc's. When svc's stream fails for a reason
 * other than a reader gone (ENOSPC on a full log disk, EIO), COMMAND's
 * output is still read, and let go: COMMAND must not block on a full pipe,
 * nor svc lose track of it, because its log cannot be written. A reader
 * gone (EPIPE) is for the caller to say (stopPassing).
 */
function pass(name: 'stdout' | 'stderr', from: NodeJS.ReadableStream & { destroy(): void }, to: NodeJS.WritableStream, filter: (() => Transform) | null): Passing {
  const through = filter?.() ?? null;
  const last: NodeJS.ReadableStream = through ?? from;
  if (through) from.pipe(through);
  let lost: LostOutput | null = null;
  let waitingForDrain = false;
  const onError = (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || lost !== null) return;
    lost = { stream: name, error };
    if (waitingForDrain) {
      waitingForDrain = false;
      last.resume();
    }
  };
  to.on('error', onError);
  last.on('data', (chunk: Buffer) => {
    if (lost !== null) return;
    let accepted: boolean;
    try {
      accepted = to.write(chunk);
    } catch (error) {
      onError(error as NodeJS.ErrnoException);
      return;
    }
    if (!accepted && lost === null) {
      waitingForDrain = true;
      last.pause();
      to.once('drain', () => {
        if (!waitingForDrain) return;
        waitingForDrain = false;
        last.resume();
      });
    }
  });
  const done = new Promise<void>((resolve) => {
    for (const event of ['end', 'close', 'error']) last.once(event, () => resolve());
  }).finally(() => to.off('error', onError));
  return {
    name,
    done,
    cut() {
      from.unpipe();
      from.destroy();
      if (through) through.end();
      // Output held back by a reader that will not take it is let go, so that svc's end waits on nothing.
      if (waitingForDrain) last.resume();
    },
    drop() {
      from.destroy();
      through?.destroy();
    },
    lost: () => lost,
  };
}
