/**
 * Keys in the files below a path (docs/contract.md §C11). Many files are
 * opened and read at once, since the time of a tree goes to opening and
 * reading small files, not to searching them (bench/scan-tree.mjs). Links
 * are not followed (what a link inside the tree points at is read where it
 * lives), `.git` directories are left to `--git`, and FIFOs, sockets and
 * devices are never opened. Names are bytes, as the file system keeps them:
 * a name that is not UTF-8 is still read, and shown with U+FFFD.
 */
import { close, constants, fstat, open, read, readdir, stat, type Dirent, type Stats } from 'node:fs';
import { promisify } from 'node:util';
import { createReadStream } from 'node:fs';
import { emptyTally, noteUnreadable, type Finding, type Tally } from './places.js';
import { scanBytes, scanStream } from './stream.js';

const openFile = promisify(open);
const statFd = promisify(fstat);
const readFd = promisify(read);
const closeFd = promisify(close);
const readDir = promisify(readdir) as (path: Buffer, options: { withFileTypes: true; encoding: 'buffer' }) => Promise<Dirent<Buffer>[]>;
const statPath = promisify(stat);

/** Files and directories open at once: beyond this the threadpool only queues them. */
const IN_FLIGHT = 64;
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
  const top = await statPath(absolute);
  const shown = path === '.' || path === './' ? '' : path.replace(/\/+$/, '');
  const root: Root = { path: Buffer.from(absolute), shown };
  const found = (display: string) => (f: Parameters<Parameters<typeof scanBytes>[1]>[0]) =>
    onFinding({ key: f.key, place: { source: 'file', path: display, line: f.line, column: f.column }, length: f.length, escaped: f.escaped, marked: f.marked, context: f.context });
  if (top.isFIFO()) {
    tally.read++;
    tally.bytes += await scanStream(createReadStream(absolute), found(path));
    return tally;
  }
  if (!top.isDirectory()) {
    await readFile(root.path, path, false, options, tally, found(path));
    return tally;
  }
  await walk(root, options, tally, found);
  return tally;
}

async function walk(root: Root, options: TreeOptions, tally: Tally, found: (display: string) => Parameters<typeof scanBytes>[1]): Promise<void> {
  // Depth first, so that the paths waiting stay few however wide the tree.
  const work: { path: Buffer; shown: string; dir: boolean }[] = [{ path: root.path, shown: root.shown, dir: true }];
  let running = 0;
  await new Promise<void>((resolve, reject) => {
    const next = () => {
      while (running < IN_FLIGHT && work.length > 0) {
        const item = work.pop()!;
        running++;
        const done = item.dir ? listDir(item.path, item.shown) : readFile(item.path, item.shown, true, options, tally, found(item.shown));
        done.then(
          () => {
            running--;
            if (running === 0 && work.length === 0) resolve();
            else next();
          },
          reject,
        );
      }
    };
    const listDir = async (dir: Buffer, shown: string) => {
      let entries: Dirent<Buffer>[];
      try {
        entries = await readDir(dir, { withFileTypes: true, encoding: 'buffer' });
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
    };
    next();
  });
}

/**
 * One file: opened without following a link and without blocking (a FIFO
 * put there since the directory was read), then read only if it is still a
 * regular file within the size limit. A directory met here (a file
 * system that did not say) is left: the walk lists directories it is told of.
 */
async function readFile(path: Buffer, shown: string, inTree: boolean, options: TreeOptions, tally: Tally, onFound: Parameters<typeof scanBytes>[1]): Promise<void> {
  let fd: number;
  try {
    fd = await openFile(path, constants.O_RDONLY | constants.O_NONBLOCK | (inTree ? constants.O_NOFOLLOW : 0));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') tally.links++;
    else noteUnreadable(tally, shown);
    return;
  }
  try {
    const stats: Stats = await statFd(fd);
    if (!stats.isFile()) {
      if (!stats.isDirectory()) tally.special++;
      return;
    }
    if (stats.size > options.maxFileSize) {
      tally.tooLarge++;
      return;
    }
    tally.read++;
    if (stats.size > WHOLE) {
      tally.bytes += await scanStream(createReadStream('', { fd, autoClose: false, highWaterMark: 1024 * 1024 }), onFound);
      return;
    }
    const bytes = Buffer.allocUnsafe(stats.size);
    let filled = 0;
    while (filled < bytes.length) {
      const { bytesRead } = await readFd(fd, bytes, filled, bytes.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    tally.bytes += filled;
    scanBytes(filled === bytes.length ? bytes : bytes.subarray(0, filled), onFound);
  } catch {
    noteUnreadable(tally, shown);
  } finally {
    await closeFd(fd).catch(() => undefined);
  }
}
