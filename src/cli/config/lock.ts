import { randomBytes } from 'node:crypto';
import { linkSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isProcessAlive, mayBeSvc, processStartTime } from '../../server/process-alive.js';
import { readUntrusted, UntrustedFileError } from './untrusted-file.js';
import { removeQuietly } from './file.js';

/** The lock is still held by someone else when the wait is over. */
export class LockBusyError extends Error {
  constructor(
    readonly lockPath: string,
    /** The pid the lock names, or null when it names none (not a lock svc made). */
    readonly holder: number | null,
  ) {
    super(`${lockPath} is held by ${holder === null ? 'something other than svc' : `pid ${holder}`}`);
    this.name = 'LockBusyError';
  }
}

/** The wait was given up (LockOptions.until) before the lock was taken: nothing was changed. */
export class LockWaitStopped extends Error {
  constructor(
    readonly lockPath: string,
    /** The pid the lock named when the wait was given up; null before svc found it held. */
    readonly holder: number | null,
    /** What `until` was aborted with. */
    readonly reason: unknown,
  ) {
    super(`the wait for ${lockPath} was given up`);
    this.name = 'LockWaitStopped';
  }
}

/** The lock file itself could not be made or read (a read-only or full file system): `cause` says why. */
export class LockFileError extends Error {
  constructor(readonly cause: unknown) {
    super(`the lock file could not be made: ${(cause as Error).message}`);
    this.name = 'LockFileError';
  }
}

export interface LockOptions {
  /** Told once, naming the holder, when the wait has lasted more than a moment. */
  onWait?: (holder: number) => void;
  /** Ends the wait at once when aborted (a signal): LockWaitStopped, and `work` is not run. */
  until?: AbortSignal;
}

/** The pid, a token, and the holder's start time where the system tells it (earlier versions wrote no start time). */
const LOCK_CONTENT = /^(\d+) [0-9a-f]{32}(?: (\d+))?\n$/;
const FOREIGN_WAIT_MS = 1_000;
/** A lock is one short line; anything longer is not svc's. */
const MAX_LOCK_BYTES = 256;
/** How long a wait for the lock goes unsaid: most holders give it back within a few milliseconds. */
const SAY_WAIT_AFTER_MS = 1_000;

/**
 * Runs `work` holding `lockPath`, a file naming this process and a token of
 * its own, and gives the lock back before it returns. `work` is
 * synchronous and runs in the turn the lock was taken in: no other change
 * of this process can run while it is held (isStale counts on that). The
 * wait for it is not: it polls with short, jittered sleeps on the event
 * loop, where a signal's listener runs (a synchronous sleep kept Ctrl-C
 * and SIGTERM waiting for the whole wait), until `waitMs` has passed or
 * `until` is aborted. A lock whose pid is gone was left by a process
 * killed while it held it, and is taken over; so is one whose pid now
 * belongs to a process that started at another time (the pid was reused,
 * by pid 1 in a container say), where the system tells start times
 * (Linux's /proc; elsewhere the pid is all there is). Liveness is judged
 * on this machine: a config directory shared with another machine or PID
 * namespace can see a live holder taken for dead.
 */
export async function withLock<T>(lockPath: string, waitMs: number, work: () => T, { onWait, until }: LockOptions = {}): Promise<T> {
  const token = randomBytes(16).toString('hex');
  // This process's start time tells it from a later process given its pid; read only here, by a change.
  const start = processStartTime(process.pid);
  const mine = `${process.pid} ${token}${start === null ? '' : ` ${start}`}\n`;
  const started = performance.now();
  const deadline = started + waitMs;
  let last = '';
  let told = false;
  for (;;) {
    if (until?.aborted) throw new LockWaitStopped(lockPath, holderOf(last), until.reason);
    if (ofTheLock(() => create(lockPath, mine, token))) {
      try {
        return work();
      } finally {
        removeIf(lockPath, mine);
      }
    }
    const seen = ofTheLock(() => readOrNull(lockPath));
    if (seen !== null) last = seen;
    // Gone already (its holder just gave it back), or stale and now removed: try again at once.
    const cleared = seen === null || ofTheLock(() => isStale(seen) && takeOver(lockPath, seen, mine, token));
    const left = deadline - performance.now();
    // A file svc did not write will not be given back by an svc: a second is time enough to be sure it stays.
    const foreign = last !== '' && holderOf(last) === null && performance.now() - started >= FOREIGN_WAIT_MS;
    if (left <= 0 || foreign) throw new LockBusyError(lockPath, holderOf(last));
    // A wait of more than a moment is said once, so that a command stuck on another's lock does not look hung.
    const holder = holderOf(last);
    if (!told && holder !== null && performance.now() - started >= SAY_WAIT_AFTER_MS) {
      told = true;
      onWait?.(holder);
    }
    if (!cleared) await nap(Math.min(left, 5 + Math.random() * 20), until);
  }
}

/** `step`, one of the lock's own file operations: what it throws is the lock file's failure, not the change's. */
function ofTheLock<T>(step: () => T): T {
  try {
    return step();
  } catch (error) {
    throw new LockFileError(error);
  }
}

/** Sleeps `ms`, or until `until` is aborted. */
function nap(ms: number, until: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const wake = () => {
      clearTimeout(timer);
      until?.removeEventListener('abort', wake);
      resolve();
    };
    const timer = setTimeout(wake, ms);
    until?.addEventListener('abort', wake);
  });
}

/**
 * Creates `path` holding `content`, or returns false if it exists. The
 * content goes into a file of our own first (O_EXCL) and is then hard-linked
 * into place, which fails if the lock exists: nobody ever reads a lock that
 * exists but does not yet name its holder, so an empty or partial lock file
 * is never mistaken for one that a crash left.
 */
function create(path: string, content: string, token: string): boolean {
  const temp = `${path}.${process.pid}.${token.slice(0, 8)}.tmp`;
  try {
    writeFileSync(temp, content, { flag: 'wx', mode: 0o600 });
    linkSync(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    // Also after a write that failed (a full disk): the file was created before the write.
    removeQuietly(temp);
  }
}

function holderOf(content: string): number | null {
  const match = LOCK_CONTENT.exec(content);
  return match ? Number(match[1]) : null;
}

/**
 * Removes the files `create` leaves when its process is killed between
 * making and removing them (`<lock>[.break].<pid>.<tag>.tmp`), for pids that run
 * no more; called by the lock's holder.
 */
export function removeDeadLockTemps(lockPath: string): void {
  const prefix = `${basename(lockPath)}.`;
  let names: string[];
  try {
    names = readdirSync(dirname(lockPath));
  } catch {
    return;
  }
  for (const name of names) {
    const match = /^(?:break\.)?(\d+)\.[0-9a-f]{8}\.tmp$/.exec(name.startsWith(prefix) ? name.slice(prefix.length) : '');
    if (match && Number(match[1]) !== process.pid && !isProcessAlive(Number(match[1]))) removeQuietly(join(dirname(lockPath), name));
  }
}

/**
 * Our own pid in a lock we are not holding was left by an earlier process
 * that had this pid: a lock is taken and given back within one synchronous
 * change (withLock), so this process cannot be holding one while it waits for another.
 * A live pid whose process started at another time than the lock says is
 * a later process given a dead holder's pid. A lock of an earlier svc,
 * which wrote no start time, is judged by what the process with its pid
 * runs: one that is no Node.js program (pid 1 after a container restart,
 * say) is not the svc that wrote it, and is not waited on (issue 46).
 * Content svc never writes is never stale: it is not ours to remove.
 */
function isStale(content: string): boolean {
  const match = LOCK_CONTENT.exec(content);
  if (!match) return false;
  const holder = Number(match[1]);
  if (holder === process.pid || !isProcessAlive(holder)) return true;
  const started = match[2];
  if (started === undefined) return !mayBeSvc(holder);
  const now = processStartTime(holder);
  return now !== null && now !== started;
}

/**
 * Removes the stale lock `seen`, and only that one. Every waiter sees a dead
 * holder at about the same moment; had each simply removed the lock, one
 * could remove the fresh lock another had just taken after the first
 * removal. So removal happens under a second lock, `<lock>.break`, taken the
 * same exclusive way: whoever holds it re-reads the lock and removes it only
 * if it is still the stale one. Returns whether the way is clear to try
 * again at once.
 */
function takeOver(lockPath: string, seen: string, mine: string, token: string): boolean {
  const breaker = `${lockPath}.break`;
  if (!create(breaker, mine, token)) {
    // Held for two file operations only, so a breaker that stays was left by a process killed between them.
    const other = readOrNull(breaker);
    if (other !== null && isStale(other)) removeIf(breaker, other);
    return false;
  }
  try {
    return removeIf(lockPath, seen);
  } finally {
    removeIf(breaker, mine);
  }
}

/**
 * The lock's content, null when there is none. Anyone who can write the
 * directory can put something there: a FIFO, a link, a large file reads as
 * what it is (a lock svc did not make), and is never waited on.
 */
function readOrNull(path: string): string | null {
  try {
    return readUntrusted(path, MAX_LOCK_BYTES).text;
  } catch (error) {
    if (error instanceof UntrustedFileError) return `(it ${error.problem})`;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Removes `path` if it still holds `content`, and says whether it is gone.
 * A failure to remove is not an error: a lock left behind names a pid that
 * will be gone, so the next writer takes it over.
 */
function removeIf(path: string, content: string): boolean {
  try {
    const now = readOrNull(path);
    if (now === content) unlinkSync(path);
    return now === null || now === content;
  } catch {
    return false;
  }
}
