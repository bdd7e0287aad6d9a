/**
 * The ignore file (docs/contract.md §C11): one fingerprint a line
 * (domain/find-keys.ts), never a key, `#` starting a comment. A line that
 * holds a key itself is not read as anything: the file is meant to be
 * committed, and svc will not treat a secret in it as a reason to look away.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { keyIn } from '../../contract/key-format.js';

export const IGNORE_FILE = '.svcscanignore';

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

/** Adds what `path` holds to `list`; a file that does not exist adds nothing, unless `required` (--ignore-file). */
export async function readIgnoreFile(path: string, list: IgnoreList, required = false): Promise<void> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (!required && (error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
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
 * through a file beside it renamed into place, so that a failed write
 * leaves the old file whole. Resolves with how many were added.
 */
export async function addToIgnoreFile(path: string, entries: readonly BaselineEntry[]): Promise<number> {
  let before = '';
  try {
    before = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const known = new Set(before.split('\n').map((line) => line.replace(/#.*/, '').trim().toLowerCase()));
  const added = entries.filter((entry, i) => !known.has(entry.fingerprint) && entries.findIndex((e) => e.fingerprint === entry.fingerprint) === i);
  if (added.length === 0) return 0;
  const head = before === '' ? '# Keys svc scan does not report: fingerprints, not keys (svc scan --baseline writes them).\n' : before.endsWith('\n') ? before : `${before}\n`;
  // The hint and place are for the reader; `where` comes from file names, so a line break in one must not start a line of its own.
  const lines = added.map((e) => `${e.fingerprint}  # ${e.hint} ${e.where.replace(/[\r\n]/g, ' ')}`);
  const temporary = join(dirname(path), `.${IGNORE_FILE}.${process.pid}.tmp`);
  await writeFile(temporary, `${head}${lines.join('\n')}\n`, { mode: 0o644 });
  await rename(temporary, path);
  return added.length;
}
