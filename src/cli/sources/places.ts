/** What a scan found and where, whatever it read: files, a repository's history, its index, or a stream. */
import { hintKeys } from '../../contract/key-format.js';
import type { FoundKey } from '../domain/find-keys.js';

export type Place =
  | { source: 'file'; path: string; line: number; column: number }
  /** A blob of a repository's history: the commit that brought it in at `path`, null where no commit on a ref's history did (a merge's own blob, a tagged blob). */
  | { source: 'git'; path: string; commit: string | null; blob: string; line: number; column: number }
  /** A line the index adds to `path` (what `git commit` would record). */
  | { source: 'index'; path: string; line: number; column: number }
  | { source: 'stdin'; line: number; column: number };

export interface Finding {
  key: string;
  place: Place;
  /** Characters the key's text takes on its line, escapes included. */
  length: number;
  escaped: boolean;
  marked: boolean;
  context: string;
}

/** What a scan read and what it left, by why. */
export interface Tally {
  /** Files, blobs or added lines' files read. */
  read: number;
  bytes: number;
  /** Over the size limit (--max-file-size). */
  tooLarge: number;
  /** FIFOs, sockets and devices inside a tree. */
  special: number;
  /** Symbolic links, which a tree scan does not follow. */
  links: number;
  /** Could not be opened or read (permissions, gone meanwhile): the first few, by path. */
  unreadable: string[];
  unreadableCount: number;
  /** `.git` directories left out of a tree scan (their history is `--git`'s). */
  gitDirs: number;
}

export function emptyTally(): Tally {
  return { read: 0, bytes: 0, tooLarge: 0, special: 0, links: 0, unreadable: [], unreadableCount: 0, gitDirs: 0 };
}

export function noteUnreadable(tally: Tally, path: string): void {
  tally.unreadableCount++;
  if (tally.unreadable.length < 5) tally.unreadable.push(hintKeys(path));
}

export type OnFound = (found: FoundKey) => void;

/** Files bigger than this are skipped unless --max-file-size says otherwise (docs/contract.md §C11). */
export const DEFAULT_MAX_FILE_SIZE = 50 * 1024 * 1024;
