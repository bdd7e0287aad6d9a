import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { describeFsError, tempFileName } from './persistence.js';
import { isProcessAlive } from './process-alive.js';
import { ServerStartError } from './start-error.js';

/** Lock files this process holds: a lock naming our own pid that is not here was left by an earlier process that had it. */
const held = new Set<string>();

export interface DataFileLock {
  /** Removes the lock file if it is still ours. */
  release(): Promise<void>;
}

/**
 * Takes `<dataFile>.lock`, a file naming the holder's pid, so that two
 * servers never save over each other. A lock whose pid no longer runs was
 * left by a crash (or SIGKILL) and is taken over. Liveness is judged by pid
 * on this machine, so a lock on a file shared with another machine or PID
 * namespace can be taken over wrongly; don't share a --data file that way.
 */
export async function lockDataFile(dataFile: string): Promise<DataFileLock> {
  const path = resolve(`${dataFile}.lock`);
  const mine = `${process.pid}\n`;
  // A few rounds: another server may be taking over the same stale lock at the same moment.
  for (let round = 0; round < 5; round++) {
    if (await create(path, join(dirname(path), tempFileName(dataFile, 0)), mine)) {
      held.add(path);
      return { release: () => release(path, mine) };
    }
    const content = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw new ServerStartError(`cannot read the lock ${path}: ${describeFsError(error)}`);
    });
    if (content === null) continue;
    const holder = /^(\d+)\n$/.exec(content) ? Number(content) : NaN;
    if (Number.isNaN(holder)) {
      throw new ServerStartError(
        `${path} is not an svc serve lock (it should hold a pid); if no svc serve uses ${dataFile}, remove it and start again`,
      );
    }
    const stale = holder === process.pid ? !held.has(path) : !isProcessAlive(holder);
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

/**
 * Creates the lock with its content in one step, a hard link to a finished
 * temp file, so nobody ever reads it half-written. The temp file is named
 * like the state file's own, so start-up clears it if a crash left it.
 */
async function create(path: string, temp: string, content: string): Promise<boolean> {
  try {
    await writeFile(temp, content, { flag: 'wx', mode: 0o644 });
    await link(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new ServerStartError(`cannot create the lock ${path}: ${describeFsError(error as NodeJS.ErrnoException)}`);
  } finally {
    await unlink(temp).catch(() => {});
  }
}

async function release(path: string, mine: string): Promise<void> {
  if (!held.delete(path)) return;
  if ((await readFile(path, 'utf8').catch(() => null)) === mine) await unlink(path).catch(() => {});
}
