/**
 * --to-command: the user's own command, run by their shell (`/bin/sh -c`;
 * `cmd.exe /d /s /c` on Windows), gets the secret on its stdin, exactly
 * its characters with no newline, then end of input; never in its
 * arguments or environment. It delivered the secret when it read all of it
 * and exited 0. What it prints goes to svc's stderr as it comes, unescaped:
 * it is the user's program talking to the user, as it would from their
 * shell, and svc's stdout stays data; where nobody watches that stderr (a
 * CI log), with the secret masked as `svc run` masks it (`cat` would print
 * it whole). No deadline: a command may rightly
 * take its time (a login, a slow secret store); Ctrl-C or SIGTERM stops it
 * (a second one kills it).
 *
 * "Read all of it" cannot be told from a pipe's writing end: the kernel
 * takes a few dozen bytes at once whether or not anyone reads them, and a
 * command that exits unread (`true`) only makes a later write fail. So on
 * POSIX the command's stdin is one end of a local socket pair that svc
 * holds both ends of: svc writes the secret into its own end and ends it,
 * and keeps the command's end open, unread, while the command runs. Once
 * the command has exited, svc reads that end itself: end-of-input at once
 * means the command took every byte; a byte still there is one it never
 * read (`true`, `head -c 10`). Holding that end also means the write never
 * meets EPIPE, whenever the command exits. The pair is made through a
 * socket in a new directory of mode 0700, which only this user can reach,
 * and removed at once. Windows has no such socket to hand a child as
 * stdin: there the command gets a pipe, and only a write it refused
 * (EPIPE) is seen as unread.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { masking } from '../child/mask.js';
import type { Deps } from '../terminal/deps.js';
import { clip } from '../text/text.js';
import { DeliveryStepError } from '../errors/delivery-failed.js';

export interface CommandContext {
  /** svc's environment: the command gets it, less SVC_API_KEY. */
  env: NodeJS.ProcessEnv;
  /** Where the command's stdout and stderr go: svc's stderr. */
  output: NodeJS.WritableStream;
  /** Nobody watches that output (a CI log): the secret, and any piece of it, is replaced by its hint there, as `svc run` does. */
  mask: boolean;
  onSignal: Deps['onSignal'];
}

export async function deliverToCommand(command: string, secret: string, ctx: CommandContext): Promise<void> {
  const shown = `\`${clip(command, 200)}\``;
  let input: Input;
  try {
    input = process.platform === 'win32' ? pipeInput() : await socketInput();
  } catch (error) {
    throw new DeliveryStepError(`${shown} could not be started: its input could not be made (${(error as Error).message})`);
  }
  try {
    await run(command, shown, secret, input, ctx);
    const unread = await input.unread();
    if (unread > 0) {
      const read = Buffer.byteLength(secret) - unread;
      throw new DeliveryStepError(
        `${shown} exited with status 0 ${read === 0 ? 'without reading the secret' : `having read only ${read} of its ${Buffer.byteLength(secret)} characters`} (a command that takes it reads its stdin to the end)`,
      );
    }
  } finally {
    input.close();
  }
}

/** The command's stdin, as svc writes and then checks it. */
interface Input {
  /** What the child gets as fd 0. */
  stdio: 'pipe' | Socket;
  /** Writes the secret and ends the input; resolves once the system took it all. */
  write(child: NodeJS.WritableStream | null, secret: string): Promise<void>;
  /** After the command exited: how many bytes of the secret it left unread. */
  unread(): Promise<number>;
  close(): void;
}

function run(command: string, shown: string, secret: string, input: Input, ctx: CommandContext): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(command, [], { shell: true, env: childEnv(ctx.env), stdio: [input.stdio, 'pipe', 'pipe'], windowsHide: true });
    let signal: NodeJS.Signals | null = null;
    let signals = 0;
    let settled = false;
    const settle = (error: DeliveryStepError | null) => {
      if (settled) return;
      settled = true;
      off();
      if (error === null) resolve();
      else reject(error);
    };
    const off = ctx.onSignal(['SIGINT', 'SIGTERM', 'SIGHUP'], (received) => {
      signal ??= received;
      child.kill(++signals === 1 ? 'SIGTERM' : 'SIGKILL');
    });
    const stopped = () => new DeliveryStepError(`${shown} was stopped (interrupted)`, signal);
    for (const stream of [child.stdout!, child.stderr!]) {
      (ctx.mask ? stream.pipe(masking(secret, ctx.env)) : stream).pipe(ctx.output, { end: false });
    }
    // Only once the whole secret was taken does the command's exit status decide.
    const written = input.write(child.stdin, secret).then(
      () => null,
      (error: Error) => error,
    );
    child.on('error', (error) => settle(new DeliveryStepError(`${shown} could not be started: ${error.message}`)));
    child.on('exit', () => {
      // Stopped: what the shell started may live on and hold its output open; svc stops listening rather than wait for it.
      if (signals === 0) return;
      child.stdout!.destroy();
      child.stderr!.destroy();
      settle(stopped());
    });
    // Otherwise the command is done once its output has all arrived.
    child.on('close', (code, killedBy) => {
      if (signals > 0) return settle(stopped());
      if (code !== 0) return settle(new DeliveryStepError(code === null ? `${shown} was killed by ${killedBy}` : `${shown} exited with status ${code}`));
      void written.then((error) =>
        settle(error === null ? null : new DeliveryStepError(`${shown} exited with status 0 without reading the secret (writing it failed: ${error.message})`)),
      );
    });
  });
}

/** A socket pair by way of a listening socket that lives only until its one connection is made. */
async function socketInput(): Promise<Input> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-'));
  try {
    const server = createServer({ pauseOnConnect: true });
    const theirs = new Promise<Socket>((resolve, reject) => {
      server.once('connection', resolve);
      server.once('error', reject);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(join(dir, 'in'), resolve);
    });
    const ours = connect(join(dir, 'in'));
    const [child] = await Promise.all([
      theirs,
      new Promise<void>((resolve, reject) => {
        ours.once('connect', resolve);
        ours.once('error', reject);
      }),
    ]);
    server.close();
    return {
      stdio: child,
      write: (_, secret) => new Promise<void>((resolve, reject) => ours.end(secret, () => resolve()).once('error', reject)),
      unread: () => leftOver(child),
      close() {
        ours.destroy();
        child.destroy();
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What is left to read on the command's end, which the command no longer holds: end of input once it is read. */
function leftOver(socket: Socket): Promise<number> {
  return new Promise((resolve) => {
    let bytes = 0;
    socket.on('data', (chunk: Buffer) => (bytes += chunk.length));
    socket.once('end', () => resolve(bytes));
    socket.once('error', () => resolve(bytes));
    socket.resume();
  });
}

function pipeInput(): Input {
  return {
    stdio: 'pipe',
    write: (stdin, secret) =>
      new Promise<void>((resolve, reject) => {
        stdin!.once('error', reject);
        stdin!.end(secret, () => resolve());
      }),
    unread: async () => 0,
    close() {},
  };
}

/**
 * svc's environment without SVC_API_KEY: the key svc itself uses (during a
 * rotation, often the one being replaced) is not the command's to read; the
 * new one reaches it on stdin. Windows spells names in any case.
 */
function childEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name, value]) => value !== undefined && name.toUpperCase() !== 'SVC_API_KEY'));
}
