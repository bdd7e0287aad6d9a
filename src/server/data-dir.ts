import { lstat, open, readdir, readlink, realpath, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { lockDataFile, type DataFileLock } from './lock.js';
import { describeFsError, tempFileName, tempFileOwner } from './persistence.js';
import { isProcessAlive } from './process-alive.js';
import { ServerStartError } from './start-error.js';

/**
 * The data file as the file system names it, symbolic links resolved (the
 * file's, and its directories'). The lock, the journal and a snapshot's
 * rename all go by this name: two servers given a link and its target meet
 * at one lock, and a snapshot replaces the file, not the link to it. A file
 * not there yet is named in its directory's real path (through a link to
 * it, if that is what was given); a directory not there either is left as
 * given, for the checks after to name.
 */
export async function realDataFile(path: string, links = 0): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    // A link to a file not made yet names where it will be: follow it, as far as the system itself would (ELOOP at 40).
    const target = links < 40 ? await readlink(path).catch(() => null) : null;
    if (target !== null) return realDataFile(resolve(dirname(path), target), links + 1);
    try {
      return join(await realpath(dirname(path)), basename(path));
    } catch {
      return path;
    }
  }
}

/**
 * Saves append to journal files beside the data file, and a compaction
 * writes a temp file there and renames it over, so the directory must take
 * new files. Permission bits do not stop root,
 * and a read-only mount stops everyone, so the only sure test is to try.
 */
export async function checkWritableDirectory(dataFile: string): Promise<void> {
  const dir = dirname(dataFile);
  const probe = join(dir, tempFileName(dataFile, 0));
  try {
    const file = await open(probe, 'wx', 0o600);
    await file.close();
    await unlink(probe);
  } catch (error) {
    throw new ServerStartError(
      `cannot save ${dataFile} (${describeFsError(error as NodeJS.ErrnoException)}): svc serve --data must be able to create files in ${dir}, ` +
        'because it saves by writing its journal there, and a new snapshot as a temp file renamed over the data file',
    );
  }
}

/**
 * Removes temp files of `dataFile` that a crashed server left. Call it only
 * with the lock held; even then a file of a live process is left alone.
 */
export async function removeStaleTempFiles(dataFile: string): Promise<void> {
  const dir = dirname(dataFile);
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    throw new ServerStartError(`cannot list ${dir} to clear temp files left by a crash: ${describeFsError(error)}`);
  });
  for (const name of names) {
    const owner = tempFileOwner(dataFile, name);
    if (owner === null || (owner !== process.pid && isProcessAlive(owner))) continue;
    await unlink(join(dir, name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw new ServerStartError(`cannot remove the stale temp file ${join(dir, name)}: ${describeFsError(error)}`);
    });
  }
}

/**
 * A data file with other names (hard links) is refused (issue 46). The lock
 * goes by a name, `<file>.lock`, and a server on another name of the same
 * file takes another lock, in what may be another directory: nothing beside
 * one name can tell that a server holds the file by another. And the names
 * do not stay one file: the journal goes by the name, and a snapshot renames
 * a new file over this name only, leaving the others with old state. The
 * link count is the file's own, whatever directory the other names are in.
 */
async function refuseOtherNames(dataFile: string): Promise<void> {
  const stats = await lstat(dataFile).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw new ServerStartError(`cannot read ${dataFile}: ${describeFsError(error)}`);
  });
  if (stats === null || stats.nlink <= 1) return;
  throw new ServerStartError(
    `${dataFile} has ${stats.nlink} names (hard links): another svc serve may be using it under another name, which this one's lock cannot see, ` +
      'and a save here would leave the other names with old state. Keep one name (remove the others once no svc serve uses them), or serve a copy',
  );
}

/**
 * Start-up for a --data file: its directory takes files, the lock is ours, the file has no other name, and a crash's
 * temp files are gone. `onLost` hears once, should the lock later be found removed or replaced (DataFileLock.verify).
 */
export async function claimDataFile(dataFile: string, onLost: (reason: string) => void): Promise<DataFileLock> {
  await checkWritableDirectory(dataFile);
  // The lock first: a second server on the same name is told who holds it, not that the file has other names.
  const lock = await lockDataFile(dataFile, onLost);
  try {
    await refuseOtherNames(dataFile);
    await removeStaleTempFiles(dataFile);
  } catch (error) {
    await lock.release();
    throw error;
  }
  return lock;
}
