/**
 * The ignore file (docs/contract.md §C11): one fingerprint a line
 * (domain/find-keys.ts), never a key, `#` starting a comment. A line that
 * holds a key itself is not read as anything: the file is meant to be
 * committed, and svc will not treat a secret in it as a reason to look away.
 * The file may come with a checkout anyone made: it is read and written
 * only as a regular file of its own, never through a link, and no larger
 * than MAX_BYTES.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { keyIn } from '../../contract/key-format.js';
import { CliError } from '../errors/errors.js';

export const IGNORE_FILE = '.svcscanignore';

/** Far more fingerprints than any project keeps (about 15,000): a larger file is not an ignore file. */
const MAX_BYTES = 1024 * 1024;

export interface IgnoreList {
  fingerprints: Set<string>;
  /** Files read, for the report. */
  files: string[];
  /** Lines that are neither a fingerprint, a comment nor blank, by file and line. */
  unread: string[];
  /** Lines that hold a key: never a reason to ignore one. */
  withKeys: string[];
}

const FINGERPRINT = /^[0-9a-f]{64}$/;

export function emptyIgnoreList(): IgnoreList {
  return { fingerprints: new Set(), files: [], unread: [], withKeys: [] };
}

/**
 * The file's text, or null where there is none. Opened without following
 * a link and without blocking on a FIFO; anything but a regular file of at
 * most MAX_BYTES is a CliError naming it. `unreadableIsNone`: one svc may
 * not open is taken for none.
 */
async function readOwnFile(path: string, unreadableIsNone = false): Promise<string | null> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    // In a directory svc may not read, which the scan then counts as unreadable: no reason to ignore anything.
    if (code === 'EACCES' && unreadableIsNone) return null;
    if (code === 'ELOOP') throw new CliError(`${path} is a symbolic link: svc reads and writes the ignore file only as a file of its own.`);
    throw new CliError(`Cannot read the ignore file ${path}: ${(error as Error).message}`);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new CliError(`${path} is not a regular file: svc reads and writes the ignore file only as a file of its own.`);
    if (stats.size > MAX_BYTES) throw new CliError(`${path} is larger than an ignore file can be (${MAX_BYTES} bytes).`);
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/** Adds what `path` holds to `list`; a file that does not exist adds nothing, unless `required` (--ignore-file). */
export async function readIgnoreFile(path: string, list: IgnoreList, required = false): Promise<void> {
  const text = await readOwnFile(path, !required);
  if (text === null) {
    if (required) throw new CliError(`The ignore file ${path} does not exist.`);
    return;
  }
  list.files.push(path);
  text.split('\n').forEach((raw, i) => {
    if (keyIn(raw) !== null) {
      list.withKeys.push(`${path}:${i + 1}`);
      return;
    }
    const entry = raw.replace(/#.*/, '').trim().toLowerCase();
    if (entry === '') return;
    if (FINGERPRINT.test(entry)) list.fingerprints.add(entry);
    else list.unread.push(`${path}:${i + 1}`);
  });
}

export interface BaselineEntry {
  fingerprint: string;
  hint: string;
  where: string;
}

/**
 * Writes `entries` not already in the file at `path` after what it holds,
 * through a file of a random name beside it, created anew (never through
 * something already there) and renamed into place, so that a failed write
 * leaves the old file whole. A line of the old file that holds a key is
 * not copied. Resolves with how many were added.
 */
export async function addToIgnoreFile(path: string, entries: readonly BaselineEntry[]): Promise<number> {
  const before = (await readOwnFile(path)) ?? '';
  const kept = before.split('\n').filter((line) => keyIn(line) === null);
  const known = new Set(kept.map((line) => line.replace(/#.*/, '').trim().toLowerCase()));
  const added = entries.filter((entry, i) => !known.has(entry.fingerprint) && entries.findIndex((e) => e.fingerprint === entry.fingerprint) === i);
  if (added.length === 0) return 0;
  const oldText = kept.join('\n');
  const head = oldText.trim() === '' ? '# Keys svc scan does not report: fingerprints, not keys (svc scan --baseline writes them).\n' : oldText.endsWith('\n') ? oldText : `${oldText}\n`;
  // The hint and place are for the reader; `where` comes from file names, so a line break in one must not start a line of its own.
  const lines = added.map((e) => `${e.fingerprint}  # ${e.hint} ${e.where.replace(/[\r\n]/g, ' ')}`);
  const temporary = join(dirname(path), `.${IGNORE_FILE}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
    try {
      await handle.writeFile(`${head}${lines.join('\n')}\n`);
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new CliError(`Could not write the ignore file ${path}: ${(error as Error).message}; it is as it was.`);
  }
  return added.length;
}
