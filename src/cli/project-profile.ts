/**
 * The profile a project chooses (docs/contract.md §C1): a file named
 * `.svc-profile` holding a profile's name, found by walking up from the
 * working directory as `.nvmrc` is. It names a profile and nothing else:
 * never a key, never an address, so a checked-out repository can choose
 * among your profiles but cannot send your key anywhere they do not
 * already go. This runs at every command's start, so a directory without
 * the file costs one stat call.
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { workingDirectory } from './io.js';
import { clip } from './render/text.js';

export const PROJECT_FILE = '.svc-profile';

export interface ProjectProfile {
  name: string;
  /** The file that named it. */
  path: string;
}

/** A profile's name is short; a longer file is not one. */
const MAX_BYTES = 1024;

/**
 * The nearest `.svc-profile` at or above `cwd` (the process's when unset), up to and including the
 * home directory (when `cwd` is below it; else up to the root): a file
 * above home belongs to no project of yours. The nearest file decides: one
 * that is refused (said through `warn`) is not passed over for another
 * further up, and the saved default applies instead.
 */
export function findProjectProfile(cwd: string | undefined, warn: (line: string) => void, home = homeDir()): ProjectProfile | null {
  const start = cwd ?? workingDirectory();
  if (start === undefined) return null;
  let dir = resolve(start);
  for (;;) {
    const path = join(dir, PROJECT_FILE);
    if (exists(path)) return readProjectFile(path, warn);
    const parent = dirname(dir);
    if (dir === home || parent === dir) return null;
    dir = parent;
  }
}

function homeDir(): string | undefined {
  try {
    return resolve(homedir());
  } catch {
    return undefined;
  }
}

/** A directory svc may not search holds no file it can read: the walk goes on above it. */
function exists(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

/** The profile's name in `path`, or null (with a warning) when the file is not one svc will take. */
function readProjectFile(path: string, warn: (line: string) => void): ProjectProfile | null {
  const refuse = (why: string) => {
    warn(`${path} ${why}; it was ignored, and the default profile applies.`);
    return null;
  };
  let text: string;
  try {
    // Non-blocking: a FIFO put there by anyone would otherwise hold every command at its open, past Ctrl-C.
    const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const stat = fstatSync(fd);
      if (!stat.isFile()) return refuse('is not a file');
      const uid = process.getuid?.();
      // Someone else's file could choose which of your profiles (which account) a command acts on.
      if (uid !== undefined && stat.uid !== uid && stat.uid !== 0) return refuse(`belongs to another user (uid ${stat.uid})`);
      if ((stat.mode & 0o002) !== 0) return refuse('can be changed by any user');
      if (stat.size > MAX_BYTES) return refuse(`is larger than a profile's name (${MAX_BYTES} bytes at most)`);
      const buffer = Buffer.alloc(MAX_BYTES + 1);
      const length = readSync(fd, buffer, 0, buffer.length, 0);
      if (length > MAX_BYTES) return refuse(`is larger than a profile's name (${MAX_BYTES} bytes at most)`);
      text = buffer.subarray(0, length).toString('utf8').replace(/^\uFEFF/, '');
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    return refuse(`could not be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  // Checked first, and never echoed: a key in a project's files is a key about to be committed.
  if (looksLikeKey(text)) {
    return refuse('looks like it holds an API key, which svc never reads from a project file (its content is not shown). Put a profile name there, keep the key in `svc login`, and revoke the key if the file was ever shared');
  }
  const name = text.trim();
  if (name === '') return refuse('is empty: it should hold a profile name');
  if (/[\r\n]/.test(name)) return refuse('holds more than one line: it should hold one profile name');
  if (/\p{Cc}/u.test(name)) return refuse(`holds a control character in '${clip(name, 200)}': it should hold one profile name`);
  return { name, path };
}

/** svc's key format, or a run of 32 or more letters and digits, both, such as another service's token. */
function looksLikeKey(text: string): boolean {
  return /sk_[A-Za-z0-9]{8,}/.test(text) || /(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{32,}/.test(text);
}
