/**
 * The profile a project chooses (docs/contract.md §C1): a file named
 * `.svc-profile` holding a profile's name, found by walking up from the
 * working directory as `.nvmrc` is. It names a profile and nothing else:
 * never a key, never an address, so a checked-out repository can choose
 * among your profiles but cannot send your key anywhere they do not
 * already go. This runs at every command's start, so a directory without
 * the file costs one stat call.
 */
import { lstatSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { workingDirectory } from '../terminal/io.js';
import { clip } from '../text/text.js';
import { nearProfile } from '../domain/suggest.js';
import { readUntrusted, UntrustedFileError } from '../config/untrusted-file.js';

export const PROJECT_FILE = '.svc-profile';

export interface ProjectProfile {
  name: string;
  /** The file that named it. */
  path: string;
}

/** The nearest `.svc-profile`, when svc will not take what it holds: `why` finishes "<path> …". */
export interface RefusedProjectFile {
  path: string;
  why: string;
}

/** A profile's name is short; a longer file is not one. */
const MAX_BYTES = 1024;

/**
 * The nearest `.svc-profile` at or above `cwd` (the process's when unset), up to and including the
 * home directory (when `cwd` is below it; else up to the root): a file
 * above home belongs to no project of yours. The nearest file decides: one
 * that is refused (told to `refused`) is not passed over for another
 * further up; the caller decides what applies instead. With `profiles`
 * given, a name that is none of them is refused too, unshown: the file
 * may be a link to, or a copy of, something that is no profile name at all.
 */
export function findProjectProfile(
  cwd: string | undefined,
  refused: (refusal: RefusedProjectFile) => void,
  home = homeDir(),
  profiles?: readonly string[],
): ProjectProfile | null {
  const start = cwd ?? workingDirectory();
  if (start === undefined) return null;
  let dir = resolve(start);
  for (;;) {
    const path = join(dir, PROJECT_FILE);
    if (exists(path)) return readProjectFile(path, refused, profiles);
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

/** A directory svc may not search holds no file it can read: the walk goes on above it. A link counts, wherever it leads. */
function exists(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

/**
 * The profile's name in `path`, or null (with a warning) when the file is
 * not one svc will take. What it holds is shown only once it is known to
 * be one of `profiles`: a file planted in a checked-out repository is read
 * into a build log otherwise.
 */
function readProjectFile(path: string, refused: (refusal: RefusedProjectFile) => void, profiles: readonly string[] | undefined): ProjectProfile | null {
  const refuse = (why: string) => {
    refused({ path, why });
    return null;
  };
  let text: string;
  try {
    const { text: read, stats } = readUntrusted(fileBehind(path), MAX_BYTES);
    const uid = process.getuid?.();
    // Someone else's file could choose which of your profiles (which account) a command acts on.
    if (uid !== undefined && stats.uid !== uid && stats.uid !== 0) return refuse(`belongs to another user (uid ${stats.uid})`);
    if ((stats.mode & 0o002) !== 0) return refuse('can be changed by any user');
    text = read.replace(/^\uFEFF/, '');
  } catch (error) {
    if (error instanceof UntrustedFileError) return refuse(error.problem);
    return refuse(`could not be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  // Checked first, and never echoed: a key in a project's files is a key about to be committed.
  if (looksLikeKey(text)) {
    return refuse('looks like it holds an API key, which svc never reads from a project file (its content is not shown). Put a profile name there, keep the key in `svc login`, and revoke the key if the file was ever shared');
  }
  const name = text.trim();
  if (name === '') return refuse('is empty: it should hold a profile name');
  if (/[\r\n]/.test(name)) return refuse('holds more than one line: it should hold one profile name (its content is not shown)');
  if (/\p{Cc}/u.test(name)) return refuse('holds a control character: it should hold one profile name (its content is not shown)');
  if (profiles !== undefined && !profiles.includes(name)) {
    const known = profiles.map((profile) => `'${clip(profile, 200)}'`).join(', ');
    // The profiles near what it holds are the user's own names: a typo's likely meaning, without echoing the file.
    return refuse(`names no profile you have (its content is not shown; the profiles are: ${known})${nearProfile(name, profiles).replace(/^ /, '. ')}`);
  }
  return { name, path };
}

/**
 * The file to read for `path`: itself, or where it links to when that is
 * in the same directory (`.svc-profile -> .svc-profile.local`). A link out
 * of the directory could make svc read any file the user can read, a
 * token in a home directory say, and is refused.
 */
function fileBehind(path: string): string {
  if (!lstatSync(path).isSymbolicLink()) return path;
  let target: string;
  try {
    target = realpathSync(path);
  } catch {
    throw new UntrustedFileError('is a symbolic link to nothing');
  }
  if (dirname(target) !== realpathSync(dirname(path))) {
    throw new UntrustedFileError('is a symbolic link to a file outside its directory (links are followed only within it)');
  }
  return target;
}

/** svc's key format, or a run of 32 or more letters and digits, both, such as another service's token. */
function looksLikeKey(text: string): boolean {
  return /sk_[A-Za-z0-9]{8,}/.test(text) || /(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{32,}/.test(text);
}
