/**
 * The one way the config file is written (docs/contract.md §C1), the same
 * in every environment: the new content goes into a temporary file beside
 * the target, is checked whole and flushed to the disk (fsync), and is
 * renamed over the target, whose directory is then flushed too. The old
 * file is never written to: until the rename it is whole and is what every
 * reader sees, and a write cut short (a full disk) leaves only a temporary
 * file, which is removed. Nothing here says what happened: the caller
 * reads the file back before it says so.
 *
 * conf, the store svc keeps its profiles in, writes the temporary file:
 * it serialises the store and creates the file with its mode. Its own
 * landing of the file could not be kept: under SNAP it writes the file in
 * place (a full disk truncated it, with every profile in it), and
 * elsewhere it renames its temporary file into place even when the write
 * was cut short. So conf writes where nothing reads, and svc lands that.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, fsyncSync, openSync, readdirSync, readSync, renameSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { removeQuietly } from './file.js';

export type ConfClass = typeof import('conf').default;

/** conf, loaded before the lock is taken: loading it is the slow part of a save, and others may be waiting. */
export async function loadConf(): Promise<ConfClass> {
  return (await import('conf')).default;
}

/** The temporary files' names begin so, conf's own (atomically's, inside ours) too. */
const TEMP_INFIX = '.tmp-';
const RENAME_RETRY_MS = 1_000;

/** `document` as `content` (its serialisation, which conf writes the same way) lands as `target`, or `target` is left as it was. */
export function writeAtomically(Conf: ConfClass, target: string, document: Record<string, unknown>, content: string, mode: number): void {
  const temp = `${target}${TEMP_INFIX}${process.pid}-${randomBytes(6).toString('hex')}`;
  try {
    const conf = new Conf<Record<string, unknown>>({ cwd: dirname(temp), configName: basename(temp), fileExtension: '', projectName: 'svc', configFileMode: mode });
    conf.store = document;
    flushWhole(temp, content);
    renameInPlace(temp, target);
  } catch (error) {
    removeQuietly(temp);
    throw error;
  }
  syncDirectory(dirname(target));
}

/** The file holds `content` and nothing else, and is on the disk: a write cut short by a full disk is refused here, before any rename. */
function flushWhole(path: string, content: string): void {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const expected = Buffer.from(content, 'utf8');
    const size = fstatSync(fd).size;
    const found = Buffer.alloc(size);
    for (let done = 0; done < size; ) {
      const read = readSync(fd, found, done, size - done, done);
      if (read === 0) break;
      done += read;
    }
    if (!found.equals(expected)) throw Object.assign(new Error('the new config file was cut short'), { code: 'ENOSPC' });
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * On Windows a rename over a file another program has open (a virus
 * scanner, an indexer) fails for a moment with EPERM, EACCES or EBUSY;
 * conf's writer tried again, and so does this one, for a second.
 */
function renameInPlace(from: string, to: string): void {
  const until = performance.now() + (process.platform === 'win32' ? RENAME_RETRY_MS : 0);
  const nap = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      renameSync(from, to);
      return;
    } catch (error) {
      const { code } = error as NodeJS.ErrnoException;
      if ((code !== 'EPERM' && code !== 'EACCES' && code !== 'EBUSY') || performance.now() >= until) throw error;
      Atomics.wait(nap, 0, 0, 20);
    }
  }
}

/**
 * Makes the rename itself survive a power cut. Windows cannot open a
 * directory to flush it, and some file systems refuse (EINVAL): the file
 * is in place all the same, which is what the caller checks.
 */
function syncDirectory(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY);
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch {
    // See above.
  } finally {
    closeSync(fd);
  }
}

/**
 * Removes the temporary files of writers that were killed before their
 * rename. Only the lock's holder writes one, so its caller, holding the
 * lock, knows that every such file beside the target is a dead writer's.
 * `<file>.previous` is the copy earlier versions kept during a write, and
 * removed at the start of the next.
 */
export function removeDeadWriters(target: string): void {
  const prefix = `${basename(target)}${TEMP_INFIX}`;
  removeQuietly(`${target}.previous`);
  let names: string[];
  try {
    names = readdirSync(dirname(target));
  } catch {
    return;
  }
  for (const name of names) if (name.startsWith(prefix)) removeQuietly(join(dirname(target), name));
}
