import { readFileSync } from 'node:fs';

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
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  // The state follows the command name, which is in parentheses and may hold ") " itself.
  const state = stat[stat.lastIndexOf(')') + 2];
  return state === 'Z' || state === 'X';
}
