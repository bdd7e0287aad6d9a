/**
 * svc's reaper (docs/contract.md §C10): a small svc process that outlives
 * svc to end what svc leaves behind when it is killed (a CI runner's
 * SIGKILL to the job's process group, the OOM killer): COMMAND's process
 * group, killed, and the key made for it, revoked. A key must not outlive
 * the job by its expiry (an hour by default) because svc could not run
 * its own revoke.
 *
 * It is started through `sh -c '… &'`, so that it is svc's child for no
 * longer than sh takes to start it, in a session of its own: a kill of
 * svc's process group, a kill of svc's process tree and a hang-up of
 * svc's terminal all miss it. It knows svc has ended from the socket
 * between them, which only svc holds: the kernel closes it when svc ends,
 * however it ends. What svc tells it, one JSON document a line:
 *   {"server": {...}}   where and with which key to revoke, and svc's pid
 *   {"creating": {...}} the create about to go out: its name, marks and start
 *   {"key": {...}}      the key to revoke; it answers "armed" once it holds it
 *   {"group": pid}     COMMAND's process group, to kill
 *   {"done": true}     svc is done with the key: the reaper ends, doing nothing
 * The key travels on the socket, never in an argument or the environment.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Socket } from 'node:net';
import type { Reaper, ReaperOrder, ReaperServer } from '../terminal/deps.js';

/** A Node start on a loaded machine takes a few hundred milliseconds; one that takes this long did not start. */
const ARM_WAIT_MS = 10_000;

/**
 * Starts the reaper and tells it the server; null when it cannot be
 * started (no sh, no svc on disk), which the caller says. Started before
 * the key is made, so that its start-up runs while svc makes the key.
 */
export function startReaper(server: ReaperServer, env: NodeJS.ProcessEnv): Reaper | null {
  const bin = reaperScript();
  if (bin === null) return null;
  const words = [process.execPath, bin];
  // The socket is fd 3 of sh, and of what sh starts in the background (fds past 2 pass on as they are).
  const options = { stdio: ['ignore', 'ignore', 'inherit', 'pipe'] as ('ignore' | 'inherit' | 'pipe')[], detached: true, env, windowsHide: true };
  const started = process.platform === 'win32' ? spawn(words[0]!, words.slice(1), options) : spawn('/bin/sh', ['-c', '"$@" &', 'sh', ...words], options);
  const socket = started.stdio[3] as Socket | null;
  if (!socket) return null;
  let failed = false;
  started.on('error', () => {
    failed = true;
  });
  started.unref();
  // svc's own end must never wait on the reaper; only an arm waits, holding the loop itself.
  socket.unref();
  socket.on('error', () => {
    failed = true;
  });
  let heard = '';
  let finished = false;
  let holding = false;
  const gone = new Set<() => void>();
  // One that never started is said by arm; one that held the key and ended is said here.
  socket.on('close', () => {
    if (holding && !finished) for (const listener of gone) listener();
  });
  const armed = new Promise<boolean>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      heard += chunk.toString('latin1');
      if (heard.includes('armed\n')) {
        holding = true;
        resolve(true);
      }
    });
    socket.on('close', () => resolve(false));
    started.on('error', () => resolve(false));
  });
  const send = (order: ReaperOrder) =>
    new Promise<void>((resolve) => {
      if (failed || socket.destroyed) return resolve();
      socket.write(`${JSON.stringify(order)}\n`, () => resolve());
    });
  void send({ server });
  // Settled by the reaper's "armed", by its silence for ARM_WAIT_MS, or by svc being done first, when it no longer matters.
  let settleArm: (held: boolean) => void = () => {};
  return {
    arm(key) {
      void send({ key });
      socket.ref();
      const timer = setTimeout(() => settleArm(false), ARM_WAIT_MS);
      return Promise.race([armed, new Promise<boolean>((resolve) => (settleArm = resolve))]).finally(() => {
        clearTimeout(timer);
        socket.unref();
      });
    },
    creating(wanted) {
      void send({ creating: wanted });
    },
    group(pid) {
      void send({ group: pid });
    },
    onGone(listener) {
      gone.add(listener);
    },
    async done() {
      finished = true;
      await send({ done: true });
      socket.end();
      settleArm(true);
    },
  };
}

/** bin/reap.js of this svc: beside dist/ in the package, or above src/ in a clone. */
function reaperScript(): string | null {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const script = join(dir, 'bin', 'reap.js');
    if (existsSync(script) && existsSync(join(dir, 'package.json'))) return script;
    if (dirname(dir) === dir) return null;
  }
}
