/**
 * Keys in the files below a path (docs/contract.md §C11). Links
 * are not followed (what a link inside the tree points at is read where it
 * lives), `.git` directories are left to `--git`, and FIFOs, sockets and
 * devices are never opened. Names are bytes, as the file system keeps them:
 * a name that is not UTF-8 is still read, and shown with U+FFFD.
 */
import { closeSync, constants, createReadStream, fstatSync, openSync, readdirSync, readSync, type Dirent } from 'node:fs';
import { stat } from 'node:fs/promises';
import { emptyTally, noteUnreadable, type Finding, type OnFound, type Tally } from './places.js';
import { scanBytes, scanStream } from './stream.js';

/** Files up to this size are read whole; larger ones in pieces (sources/stream.ts). */
const WHOLE = 8 * 1024 * 1024;
const SLASH = Buffer.from('/');
const GIT = Buffer.from('.git');

export interface TreeOptions {
  maxFileSize: number;
}

/** The root as given, and the path shown for a file below it. */
interface Root {
  /** Absolute, as bytes. */
  path: Buffer;
  /** What a place shows for the root: the path as the person gave it, `.` left out. */
  shown: string;
}

/**
 * Searches `path` (a directory, a file or a FIFO such as `<(…)`), which
 * `cwd` resolves when relative; `onFinding` is told of each key as it is
 * found. Throws ENOENT and the like for `path` itself.
 */
export async function scanTree(path: string, absolute: string, options: TreeOptions, onFinding: (finding: Finding) => void, tally: Tally = emptyTally()): Promise<Tally> {
  const top = await stat(absolute);
  const shown = path === '.' || path === './' ? '' : path.replace(/\/+$/, '');
  const root: Root = { path: Buffer.from(absolute), shown };
  const found = (display: string): OnFound => (f) =>
    onFinding({ key: f.key, place: { source: 'file', path: display, line: f.line, column: f.column }, length: f.length, escaped: f.escaped, marked: f.marked, context: f.context });
  if (top.isFIFO()) {
    tally.read++;
    tally.bytes += await scanStream(createReadStream(absolute), found(path));
    return tally;
  }
  if (!top.isDirectory()) {
    await new WholeReader().read(root.path, path, false, options, tally, found(path));
    return tally;
  }
  await walk(root, options, tally, found);
  return tally;
}

/**
 * The walk, with the system calls made one after another on this thread:
 * a file of a tree is a few kilobytes, and the round trip of an
 * asynchronous open, stat, read and close through the threadpool costs
 * more than the calls themselves: over bench/scan-tree.mjs's 50,084 files,
 * warm in the page cache, a walk through fs.promises, 64 files at once,
 * took 5.3 s where this one-after-another read takes 1.2 s (`node
 * bench/scan-read-floor.mjs [--async] TREE`). The event
 * loop gets its turn every 64 files, so that a signal still ends svc at once.
 */
async function walk(root: Root, options: TreeOptions, tally: Tally, found: (display: string) => OnFound): Promise<void> {
  // Depth first, so that the paths waiting stay few however wide the tree.
  const work: { path: Buffer; shown: string; dir: boolean }[] = [{ path: root.path, shown: root.shown, dir: true }];
  const reader = new WholeReader();
  let sinceTurn = 0;
  while (work.length > 0) {
    const item = work.pop()!;
    if (item.dir) {
      listDir(item.path, item.shown, tally, work);
      continue;
    }
    const large = reader.read(item.path, item.shown, true, options, tally, found(item.shown));
    if (large !== null) await large;
    if (++sinceTurn === 64) {
      sinceTurn = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
}

function listDir(dir: Buffer, shown: string, tally: Tally, work: { path: Buffer; shown: string; dir: boolean }[]): void {
  let entries: Dirent<Buffer>[];
  try {
    entries = readdirSync(dir, { withFileTypes: true, encoding: 'buffer' });
  } catch {
    noteUnreadable(tally, shown === '' ? '.' : shown);
    return;
  }
  for (const entry of entries) {
    const path = Buffer.concat([dir, SLASH, entry.name]);
    const name = entry.name.toString('utf8');
    const entryShown = shown === '' ? name : `${shown}/${name}`;
    if (entry.isDirectory()) {
      if (entry.name.equals(GIT)) tally.gitDirs++;
      else work.push({ path, shown: entryShown, dir: true });
    } else if (entry.isFile()) work.push({ path, shown: entryShown, dir: false });
    else if (entry.isSymbolicLink()) tally.links++;
    else if (entry.isFIFO() || entry.isSocket() || entry.isCharacterDevice() || entry.isBlockDevice()) tally.special++;
    // A file system that does not say (DT_UNKNOWN): open tells, without following a link or blocking on a FIFO.
    else work.push({ path, shown: entryShown, dir: false });
  }
}

/**
 * Reads files into one buffer it keeps, grown to the largest file read:
 * each file is opened without following a link and without blocking (a
 * FIFO put there since the directory was read), then read only if it is
 * still a regular file within the size limit. A file larger than WHOLE is
 * read in pieces, asynchronously: the promise of that is returned, null
 * for every other file.
 */
class WholeReader {
  #buffer = Buffer.allocUnsafe(256 * 1024);

  read(path: Buffer, shown: string, inTree: boolean, options: TreeOptions, tally: Tally, onFound: OnFound): Promise<void> | null {
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (inTree ? constants.O_NOFOLLOW : 0));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ELOOP') tally.links++;
      else noteUnreadable(tally, shown);
      return null;
    }
    let closeHere = true;
    try {
      // Most files fit the buffer: read first, and ask the file's size and type only of one that fills it.
      let filled = readSync(fd, this.#buffer, 0, this.#buffer.length, 0);
      if (filled === this.#buffer.length) {
        const stats = fstatSync(fd);
        if (!stats.isFile()) {
          tally.special++;
          return null;
        }
        if (stats.size > options.maxFileSize) {
          tally.tooLarge++;
          return null;
        }
        if (stats.size > WHOLE) {
          tally.read++;
          closeHere = false;
          return scanStream(createReadStream('', { fd, highWaterMark: 1024 * 1024 }), onFound).then(
            (bytes) => {
              tally.bytes += bytes;
            },
            () => noteUnreadable(tally, shown),
          );
        }
        const grown = Buffer.allocUnsafe(Math.max(stats.size + 1, this.#buffer.length * 2));
        this.#buffer.copy(grown, 0, 0, filled);
        this.#buffer = grown;
        for (let read = 1; read > 0 && filled < this.#buffer.length; filled += read) read = readSync(fd, this.#buffer, filled, this.#buffer.length - filled, filled);
      }
      if (filled > options.maxFileSize) {
        tally.tooLarge++;
        return null;
      }
      tally.read++;
      tally.bytes += filled;
      scanBytes(this.#buffer.subarray(0, filled), onFound);
    } catch (error) {
      // A directory that a file system without types did not say was one, opened as a file.
      if ((error as NodeJS.ErrnoException).code !== 'EISDIR') noteUnreadable(tally, shown);
    } finally {
      if (closeHere) closeSync(fd);
    }
    return null;
  }
}
