import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { link, open, readFile, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { describeFsError, LockLostError, StateFileError, tempFileName } from './persistence.js';
import { isProcessAlive, mayBeSvc } from './process-alive.js';
import { ServerStartError } from './start-error.js';

/** The content of each lock this process holds, by path: a lock naming our own pid with other content was left by an earlier process that had it. */
const held = new Map<string, string>();

/** A lock names its holder's pid; since this version also a random token, which tells two holders of one pid apart. */
const LOCK_CONTENT = /^(\d+)(?: [0-9a-f]{32})?\n$/;

export interface DataFileLock {
  /**
   * Resolves while the lock file is still this lock's own (its content and
   * inode) in the directory it was taken in. Once it is not, rejects with a
   * LockLostError, then and from then on: nothing makes it ours again, since
   * another server may have loaded the file in between. Rejects with a plain
   * StateFileError when it cannot tell (the lock cannot be read).
   */
  verify(): Promise<void>;
  /** Removes the lock file if it is still ours. */
  release(): Promise<void>;
}

/**
 * Takes `<dataFile>.lock`, a file naming the holder's pid, so that two
 * servers never save over each other. A lock whose pid no longer runs was
 * left by a crash (or SIGKILL) and is taken over, and so is one whose pid
 * now runs a program that is not Node.js (mayBeSvc). Liveness is judged by pid
 * on this machine, so a lock on a file shared with another machine or PID
 * namespace can be taken over wrongly; don't share a --data file that way.
 *
 * Nothing stops a person from removing the lock, or the directory, under a
 * running server; `verify` notices it, and `onLost` hears of it once, with
 * the reason, when it first does.
 */
export async function lockDataFile(dataFile: string, onLost: (reason: string) => void): Promise<DataFileLock> {
  const path = resolve(`${dataFile}.lock`);
  const mine = `${process.pid} ${randomBytes(16).toString('hex')}\n`;
  // A few rounds: another server may be taking over the same stale lock at the same moment.
  for (let round = 0; round < 5; round++) {
    const directory = await stat(dirname(path)).catch((error: NodeJS.ErrnoException) => {
      throw new ServerStartError(`cannot take the lock ${path}: ${describeFsError(error)}`);
    });
    const taken = await create(path, join(dirname(path), tempFileName(dataFile, 0)), mine);
    if (taken) {
      held.set(path, mine);
      return watched(path, mine, { directory, lock: taken }, onLost);
    }
    const content = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw new ServerStartError(`cannot read the lock ${path}: ${describeFsError(error)}`);
    });
    if (content === null) continue;
    const holder = lockHolder(content);
    if (holder === null) {
      throw new ServerStartError(
        `${path} is not an svc serve lock (it should hold a pid); if no svc serve uses ${dataFile}, remove it and start again`,
      );
    }
    // A live pid that runs no Node.js program (pid 1 after a container restart, say) is not the svc serve that wrote it.
    const stale = holder === process.pid ? held.get(path) !== content : !isProcessAlive(holder) || !mayBeSvc(holder);
    if (!stale) {
      throw new ServerStartError(
        `${dataFile} is in use by another svc serve (pid ${holder}); stop that one first, or choose another --data file. ` +
          `(If pid ${holder} is not an svc serve, remove ${path} and start again.)`,
      );
    }
    // Only the lock just judged stale is removed: one that changed meanwhile belongs to someone else.
    if ((await readFile(path, 'utf8').catch(() => null)) === content) await unlink(path).catch(() => {});
  }
  throw new ServerStartError(`could not take the lock ${path}: it keeps changing hands; is another svc serve starting on ${dataFile}?`);
}

function lockHolder(content: string): number | null {
  const match = LOCK_CONTENT.exec(content);
  return match ? Number(match[1]) : null;
}

/**
 * Creates the lock with its content in one step, a hard link to a finished
 * temp file, so nobody ever reads it half-written. The temp file is named
 * like the state file's own, so start-up clears it if a crash left it.
 * Answers the lock's inode (the temp file's, which it shares), or null when
 * a lock exists already.
 */
async function create(path: string, temp: string, content: string): Promise<Stats | null> {
  try {
    const file = await open(temp, 'wx', 0o644);
    let inode: Stats;
    try {
      await file.writeFile(content);
      inode = await file.stat();
    } finally {
      await file.close();
    }
    await link(temp, path);
    return inode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return null;
    throw new ServerStartError(`cannot create the lock ${path}: ${describeFsError(error as NodeJS.ErrnoException)}`);
  } finally {
    await unlink(temp).catch(() => {});
  }
}

interface Taken {
  /** The directory the lock was made in, as it was just before. */
  directory: Stats;
  lock: Stats;
}

function watched(path: string, mine: string, taken: Taken, onLost: (reason: string) => void): DataFileLock {
  const dir = dirname(path);
  let lost: string | null = null;

  /** Why the lock is no longer ours, or null while it is; throws when that cannot be told. */
  async function problem(): Promise<string | null> {
    const cannotTell = (error: NodeJS.ErrnoException) => new StateFileError(`cannot check the lock ${path}: ${describeFsError(error)}`);
    // The directory first: removing it takes the lock with it, and the directory is the better news.
    let directory: Stats;
    try {
      directory = await stat(dir);
    } catch (error) {
      const { code } = error as NodeJS.ErrnoException;
      if (code === 'ENOENT' || code === 'ENOTDIR') return `its directory ${dir} was removed`;
      throw cannotTell(error as NodeJS.ErrnoException);
    }
    if (!sameInode(directory, taken.directory)) return `its directory ${dir} was replaced by another one (removed and made again, or moved)`;
    let content: string;
    let lock: Stats;
    try {
      // One open for both, so the content read is that of the inode compared.
      const file = await open(path, 'r');
      try {
        lock = await file.stat();
        content = await file.readFile('utf8');
      } finally {
        await file.close();
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return `${path} was removed`;
      throw cannotTell(error as NodeJS.ErrnoException);
    }
    if (content === mine && sameInode(lock, taken.lock)) return null;
    if (content === mine) return `${path} was replaced by a copy of it`;
    const holder = lockHolder(content);
    return holder === null ? `${path} was replaced by a file that is not an svc serve lock` : `${path} was replaced by the lock of pid ${holder}`;
  }

  return {
    async verify() {
      if (lost === null) {
        const reason = await problem();
        if (reason === null) return;
        // Another check may have found it while this one waited on the file system.
        if (lost === null) {
          lost = reason;
          onLost(reason);
        }
      }
      throw new LockLostError(lost);
    },
    async release() {
      if (held.get(path) === mine) held.delete(path);
      if (lost !== null) return;
      if ((await readFile(path, 'utf8').catch(() => null)) === mine) await unlink(path).catch(() => {});
    },
  };
}

function sameInode(a: Stats, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}
