/**
 * The processes of `svc run`'s job (docs/contract.md §C10): COMMAND leads a
 * session of its own, and what it starts stays in that session unless it
 * makes one itself (a daemon's setsid). A child that moved to a process
 * group of its own (setpgid) is out of reach of a signal to COMMAND's
 * group, but still the job's: on Linux the session's members are read from
 * /proc, and are signalled too. Elsewhere the process group is all there is.
 */
import { readdirSync, readFileSync } from 'node:fs';

interface Member {
  pid: number;
  pgrp: number;
}

/**
 * The live processes of session `sid`, on Linux; null elsewhere, where
 * there is no telling. A zombie is none: it has ended, and waits only for
 * a parent to reap it (in a container whose first process reaps nothing,
 * for ever).
 */
function membersOf(sid: number): Member[] | null {
  if (process.platform !== 'linux') return null;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return null;
  }
  const found: Member[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp session …; comm may hold spaces and parentheses, so the fields are read after its last ')'.
    const [state, , pgrp, session] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(session) === sid && state !== 'Z') found.push({ pid: Number(entry), pgrp: Number(pgrp) });
  }
  return found;
}

/** Sends `signal` to COMMAND's process group and to the rest of its session. */
export function signalJob(sid: number, signal: NodeJS.Signals): void {
  const strays = (membersOf(sid) ?? []).filter((member) => member.pgrp !== sid).map((member) => member.pid);
  for (const target of [-sid, ...strays]) {
    try {
      process.kill(target, signal);
    } catch {
      // Gone already.
    }
  }
}

/** Whether anything of the job is left: a live member of its session, where /proc tells; else anyone in its process group. */
export function jobAlive(sid: number): boolean {
  const members = membersOf(sid);
  if (members !== null) return members.length > 0;
  try {
    process.kill(-sid, 0);
    return true;
  } catch (error) {
    // EPERM: a process is there, one svc may not signal (it changed its user).
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
