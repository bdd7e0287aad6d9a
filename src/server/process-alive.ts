import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

/**
 * Whether a process with this pid runs on this machine; one we may not
 * signal still runs. One that has exited but that its parent has not yet
 * reaped (a zombie, as after a `kill -9` whose parent is busy) answers a
 * signal too, but holds nothing: it runs no more.
 */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return !isZombie(pid);
}

/** On Linux, /proc says so; elsewhere (no /proc) a process that answers a signal is taken to run. */
function isZombie(pid: number): boolean {
  const state = procStat(pid)?.[0];
  return state === 'Z' || state === 'X';
}

/**
 * When the process with this pid started, in clock ticks since boot
 * (field 22 of /proc/<pid>/stat), as an opaque string: with the pid, it
 * tells one process from a later one given the same pid. Null where there
 * is no /proc (macOS, Windows), or no such process; a pid is then all
 * there is to go by.
 */
export function processStartTime(pid: number): string | null {
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  const start = procStat(pid)?.[19];
  return start !== undefined && /^\d+$/.test(start) ? start : null;
}

/** The fields of /proc/<pid>/stat from the state (field 3) on; null without /proc or the process. */
function procStat(pid: number): string[] | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The fields follow the command name, which is in parentheses and may hold ") " itself.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/**
 * Whether the live process with this pid may be an svc, by its command
 * line (/proc/<pid>/cmdline): svc runs in Node.js, as `node bin/svc.js`,
 * through an npm, npx or pnpm shim (`node …/bin/svc`), or inside a Node
 * program that embeds it (a test runner's worker, whose title stays
 * `node …`). So a process none of whose arguments names node or svc (an
 * init such as pid 1, a shell, a daemon given a dead svc's pid after a
 * restart) is not one, and neither is one with no command line at all (a
 * kernel thread). Where the command line cannot be read (no /proc, or
 * /proc mounted with hidepid), every process may be: the pid is all there
 * is to go by.
 */
export function mayBeSvc(pid: number): boolean {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return true;
  }
  return text.split('\0').some((arg) => /node|svc/i.test(basename(arg)));
}
