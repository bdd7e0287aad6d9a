import { chmodSync, existsSync, lstatSync, mkdirSync, readlinkSync, realpathSync, statSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { readEnv } from '../terminal/environment.js';
import type { Deps } from '../terminal/deps.js';
import { CliError, InterruptedError, STOPPING_SIGNALS } from '../errors/errors.js';
import { fileKind } from './untrusted-file.js';
import { ConfigShapeError, DEFAULT_PROFILE_FIELD, parseConfig, readConfigText, serializeConfig, type Profile } from './file.js';
import { LockBusyError, LockFileError, LockWaitStopped, removeDeadLockTemps, withLock } from './lock.js';
import { loadConf, removeDeadWriters, writeAtomically, type ConfClass } from './writer.js';

export type { KeyringRef, PendingRotation, Profile } from './file.js';

/** The profiles file, readable and writable by its owner alone. */
export interface ConfigStore {
  readonly path: string;
  /** The profile as the file holds it now (empty if it has none); reading takes no lock. */
  getProfile(name: string): Profile;
  profileNames(): string[];
  /** The profile used when neither --profile nor SVC_PROFILE names one (`svc profile use`); undefined for `default`. */
  defaultProfile(): string | undefined;
  /**
   * Changes one profile and nothing else, under the config file's lock:
   * `change` gets the profile as the file holds it at that moment, and
   * returns its new content, or undefined to remove it (a profile with no
   * field set is removed too). Returns what was written. Throws a CliError
   * naming the file when the change could not be saved, in which case the
   * file is as it was. `change` runs while the lock is held: no I/O, and no
   * update of its own. With `setDefault` true the profile becomes the
   * default one, in the same write; false makes `default` the default
   * again if it was this one.
   */
  update(name: string, change: (profile: Readonly<Profile>) => Profile | undefined, options?: UpdateOptions): Promise<Profile | undefined>;
}

export interface UpdateOptions {
  setDefault?: boolean;
}

export interface ConfigOptions {
  /** How long a change waits for another svc to finish its own (default 20 s). */
  lockWaitMs?: number;
  /** Where conf comes from: a test gives one that meets a full disk. */
  loadConf?: () => Promise<ConfClass>;
  /**
   * svc's signals: SIGINT, SIGTERM or SIGHUP before the lock is taken (a
   * wait for another svc's change) stops the change at once, nothing
   * saved (InterruptedError). Unset: nothing stops the wait but its end.
   */
  onSignal?: Deps['onSignal'];
}

const FILE_MODE = 0o600;
const DIR_MODE = 0o700;
/**
 * How long a change waits for other svc processes to finish theirs. Each
 * holds the lock for one read and one write, but a CI runner starting
 * twenty at once on a loaded machine queues them for seconds; a holder
 * that died is taken over at once, whatever this says.
 */
const LOCK_WAIT_MS = 20_000;

export function configDir(env: NodeJS.ProcessEnv): string {
  const dir = readEnv(env, 'SVC_CONFIG_DIR');
  if (dir) return dir;
  const base = readEnv(env, 'XDG_CONFIG_HOME') || join(homedir(), '.config');
  return join(base, 'svc');
}

/**
 * The profiles file, in a directory only its owner can change (docs/contract.md
 * §C1). Another user's directory or file, or one others may write (a shared
 * sticky directory such as /tmp included), is refused rather than trusted
 * or chmodded; modes are changed only on a directory svc creates and on
 * svc's own file, with a warning. Nothing is created until something is
 * saved: a command that saves nothing works without a usable home (a
 * read-only one, one that is missing or another user's), where there is
 * simply no profile yet.
 *
 * Several svc processes may change profiles at once (CI jobs sharing a home,
 * shells in several tabs), so every change is a read-modify-write of the
 * whole file under a lock file beside it, `config.json.lock`, and lands by
 * an atomic rename. Reading takes no lock: the rename means a reader sees
 * one whole file or the other.
 */
/**
 * A config svc could not open, for a command that needs nothing from it:
 * no profiles, and every change refused with the reason it could not be
 * opened. Nothing of the file is read.
 */
export function unopenedConfig(env: NodeJS.ProcessEnv, why: CliError): ConfigStore {
  return {
    path: join(resolve(configDir(env)), 'config.json'),
    getProfile: () => ({}),
    profileNames: () => [],
    defaultProfile: () => undefined,
    update: () => Promise.reject(why),
  };
}

export function openConfig(env: NodeJS.ProcessEnv, warn: (line: string) => void, storeOptions: ConfigOptions = {}): ConfigStore {
  const dir = resolve(configDir(env));
  const file = join(dir, 'config.json');
  const dirStats = reachable(dir);
  if (dirStats && !dirStats.isDirectory()) throw new CliError(`The config directory ${dir} is ${fileKind(dirStats)}, not a directory. Set SVC_CONFIG_DIR to a directory.`);
  if (dirStats) refuseUnsafe(dir, 'config directory', dirStats);
  // Where the profiles are: the file, or where it links to (a link stays a link).
  const target = dirStats ? targetOf(file) : file;
  const stats = dirStats ? lstatOrNull(target) : null;
  if (stats && !stats.isFile()) {
    throw new CliError(`The config file ${file} is ${fileKind(stats)}, not a regular file. svc has left it as it is: move it aside, and run \`svc login\` again.`);
  }
  const lockPath = `${file}.lock`;
  const lockWaitMs = storeOptions.lockWaitMs ?? LOCK_WAIT_MS;
  const readText = () => {
    if (!dirStats && !existsSync(dir)) return null;
    try {
      return readConfigText(target);
    } catch (error) {
      throw unreadable(error);
    }
  };
  const unreadable = (error: unknown) => {
    const problem = error instanceof ConfigShapeError ? error.problem : describeFsError(error);
    return new CliError(`The config file ${file} could not be read: ${problem}. svc has left it as it is: fix it, or move it aside and run \`svc login\` again.`);
  };
  const load = () => {
    const text = readText();
    try {
      return { text, document: parseConfig(text) };
    } catch (error) {
      throw unreadable(error);
    }
  };
  const read = () => load().document;
  // Turns a broken file into one clear error before any command relies on it.
  read();
  // Only a file that is svc's config, and svc's own: one reached through a link may be anyone's file, linked there
  // by mistake or on purpose, and its mode is for its owner to change.
  if (stats && (stats.mode & 0o077) !== 0) {
    if (target !== file) {
      warn(`${file} links to ${target}, which other users can read, and it holds API keys: make it 0600 (svc changes no mode through a link; a save of its own writes the file anew, as 0600).`);
    } else {
      try {
        chmodSync(target, FILE_MODE);
        warn(`${file} was readable by other users; it holds API keys, so its mode is now 0600.`);
      } catch (error) {
        warn(`${file} is readable by other users, and it holds API keys; its mode could not be made 0600: ${describeFsError(error)}.`);
      }
    }
  }
  let updating = false;

  return {
    path: file,
    getProfile(name) {
      const { profiles } = read();
      return Object.hasOwn(profiles, name) ? { ...profiles[name] } : {};
    },
    profileNames() {
      return Object.keys(read().profiles).sort();
    },
    defaultProfile() {
      return read().other[DEFAULT_PROFILE_FIELD] as string | undefined;
    },
    update(name, change, options = {}) {
      // Thrown here, not as a rejection: a change that calls update would otherwise go on with a promise for a profile.
      if (updating) throw new Error('ConfigStore.update was called from inside a change to the config');
      const stop = new AbortController();
      const off = storeOptions.onSignal?.([...STOPPING_SIGNALS], (signal) => stop.abort(signal)) ?? (() => {});
      return (storeOptions.loadConf ?? loadConf)()
        .then((Conf) => save(Conf, name, change, options, stop.signal))
        .finally(off);
    },
  };

  async function save(
    Conf: ConfClass,
    name: string,
    change: (profile: Readonly<Profile>) => Profile | undefined,
    options: UpdateOptions,
    until: AbortSignal,
  ): Promise<Profile | undefined> {
    const notSaved = (cause: string) =>
      new CliError(
        `Could not save profile '${name}' to ${file}: ${cause}. Nothing was changed; the file holds what it held before. ` +
          'SVC_CONFIG_DIR chooses another directory for the profiles.',
      );
    makeDirectory(dir, notSaved);
    try {
      return await withLock(lockPath, lockWaitMs, () => saveLocked(Conf, name, change, options, notSaved), {
        onWait: (holder) => warn(`Waiting for another svc (pid ${holder}) to finish its change to ${file}; svc waits up to ${lockWaitMs / 1000} s.`),
        until,
      });
    } catch (error) {
      if (error instanceof LockFileError) throw notSaved(`its lock file ${lockPath} could not be made: ${describeFsError(error.cause)}`);
      if (error instanceof LockWaitStopped) {
        const signal = error.reason as NodeJS.Signals;
        throw new InterruptedError(
          [
            error.holder === null
              ? `Stopped by ${signal} before profile '${name}' was saved to ${file}. Nothing was changed.`
              : `Stopped by ${signal} while waiting for another svc (pid ${error.holder}) to finish its change to ${file}: profile '${name}' was not saved. Nothing was changed.`,
          ],
          signal,
        );
      }
      if (!(error instanceof LockBusyError)) throw error;
      const held =
        error.holder === null
          ? `${lockPath} is there, and it is not a lock svc made`
          : `${lockPath} has been held by another svc (pid ${error.holder}) for more than ${lockWaitMs / 1000} s`;
      throw new CliError(
        `Could not save profile '${name}' to ${file}: ${held}. Nothing was changed. If no svc is running, remove ${lockPath} and try again.`,
      );
    }
  }

  /** The read-change-write of `save`, under the lock. */
  function saveLocked(
    Conf: ConfClass,
    name: string,
    change: (profile: Readonly<Profile>) => Profile | undefined,
    options: UpdateOptions,
    notSaved: (cause: string) => CliError,
  ): Profile | undefined {
    removeDeadLockTemps(lockPath);
    removeDeadWriters(target);
    const { text, document } = load();
    const before = Object.hasOwn(document.profiles, name) ? document.profiles[name] : undefined;
    let changed: Profile | undefined;
    updating = true;
    try {
      changed = change(Object.freeze({ ...before }));
    } finally {
      updating = false;
    }
    const after = written(changed);
    const other = withDefault(document.other, name, options.setDefault);
    if (JSON.stringify(before) === JSON.stringify(after) && other === document.other) return after;
    const profiles = { ...document.profiles };
    if (after === undefined) delete profiles[name];
    else Object.defineProperty(profiles, name, { value: after, enumerable: true, writable: true, configurable: true });
    const expected = serializeConfig({ ...document, other, profiles });
    let failure: unknown;
    try {
      writeAtomically(Conf, target, { ...other, profiles }, expected, FILE_MODE);
    } catch (error) {
      failure = error;
    }
    // What is said is what the file holds, read back: not what the write returned.
    const now = readBack(target);
    if (now === expected) return after;
    const cause = failure === undefined ? 'the file read back did not hold what was written' : describeFsError(failure);
    if (now === text) throw notSaved(cause);
    throw new CliError(`Could not save profile '${name}' to ${file}: ${cause}, and the file no longer holds what it held before. Check it before going on.`);
  }
}

/** The directory, made (mode 0700) when a save needs it and it is not there; `fail` makes the error naming the cause. */
function makeDirectory(dir: string, fail: (cause: string) => CliError): void {
  if (!existsSync(dir)) {
    try {
      // One level at a time: a recursive mkdir reports a read-only file system as ENOENT.
      for (const level of missingLevels(dir)) makeLevel(level);
      chmodSync(dir, DIR_MODE);
    } catch (error) {
      throw fail(`its directory ${dir} could not be made: ${describeFsError(error)}`);
    }
  }
  refuseUnsafe(dir, 'config directory', statSync(dir));
}

/** One directory; another svc saving at the same moment may have made it first. */
function makeLevel(dir: string): void {
  try {
    mkdirSync(dir, { mode: DIR_MODE });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** `dir` and the directories above it that do not exist, outermost first. */
function missingLevels(dir: string): string[] {
  const levels: string[] = [];
  for (let level = dir; !existsSync(level) && dirname(level) !== level; level = dirname(level)) levels.unshift(level);
  return levels;
}

/** The text at `path` now, null when there is none or it cannot be read: then it is not what was meant either. */
function readBack(path: string): string | null {
  try {
    return readConfigText(path);
  } catch {
    return null;
  }
}

/**
 * The directory's stats, or null when svc cannot reach it: not there, or
 * inside a directory this user may not search (another user's home). It
 * then holds no profile svc could read, and is made only by a save.
 */
function reachable(dir: string): Stats | null {
  try {
    return statSync(dir);
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES') return null;
    throw error;
  }
}

/**
 * The file's other fields with `name` made the default profile (`set`
 * true; `default` itself is the default when the field is absent), or no
 * longer the default (`set` false); the same object when nothing changes.
 */
function withDefault(other: Record<string, unknown>, name: string, set: boolean | undefined): Record<string, unknown> {
  const current = other[DEFAULT_PROFILE_FIELD];
  const wanted = set === true ? (name === 'default' ? undefined : name) : set === false && current === name ? undefined : current;
  if (wanted === current) return other;
  const { [DEFAULT_PROFILE_FIELD]: _, ...rest } = other;
  return wanted === undefined ? rest : { ...rest, [DEFAULT_PROFILE_FIELD]: wanted };
}

/** The profile as it will read back: without fields left undefined, or undefined when none is left. */
function written(profile: Profile | undefined): Profile | undefined {
  const fields = Object.entries(profile ?? {}).filter(([, value]) => value !== undefined);
  return fields.length === 0 ? undefined : (Object.fromEntries(fields) as Profile);
}

/**
 * Where the profiles are for `file`: itself, or the file it links to,
 * written there as it was read, so that the link stays a link. A link to a
 * file not made yet (a dotfiles checkout, say) is where the first save
 * goes; a link into a directory that does not exist is refused. The target
 * and its directory must pass the same test as the config's own.
 */
function targetOf(file: string): string {
  const link = lstatOrNull(file);
  if (!link) return file;
  if (!link.isSymbolicLink()) {
    refuseUnsafe(file, 'config file', link);
    return file;
  }
  let target: string;
  try {
    target = realpathSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const pointed = resolve(dirname(file), readlinkSync(file));
    try {
      target = join(realpathSync(dirname(pointed)), basename(pointed));
    } catch {
      throw new CliError(`The config file ${file} is a symbolic link to ${pointed}, whose directory does not exist. Fix or remove the link, or set SVC_CONFIG_DIR.`);
    }
    if (lstatOrNull(target)) throw new CliError(`The config file ${file} is a symbolic link to ${pointed}, which links to nothing. Fix or remove the link, or set SVC_CONFIG_DIR.`);
  }
  refuseUnsafe(dirname(target), `directory of the config file's link target ${target}`, statSync(dirname(target)));
  const stats = lstatOrNull(target);
  if (stats) refuseUnsafe(target, `config file's link target`, stats);
  return target;
}

/** The cause in words, with its code (what a search for it finds), without a temp file's name, which means nothing to the user. */
function describeFsError(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  const words = {
    ENOSPC: 'no space left on the device',
    EDQUOT: 'the disk quota is exhausted',
    EROFS: 'the file system is read-only',
    EACCES: 'permission denied',
    EPERM: 'permission denied',
    ENOENT: 'its directory no longer exists',
    ENOTDIR: 'a part of its path is not a directory',
    EISDIR: 'it is a directory',
  }[code ?? ''];
  if (words) return `${words} (${code})`;
  return code ? message : String(error);
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Owned by the user running svc, and writable by nobody else. */
function refuseUnsafe(path: string, what: string, stats: Stats): void {
  const uid = process.getuid?.();
  if (uid === undefined) return;
  const mode = (stats.mode & 0o7777).toString(8).padStart(4, '0');
  let problem: string | undefined;
  if (stats.uid !== uid) problem = `it belongs to another user (uid ${stats.uid})`;
  else if ((stats.mode & 0o022) !== 0) problem = `other users can write to it (mode ${mode})`;
  if (problem === undefined) return;
  throw new CliError(
    `Refusing to use the ${what} ${path}: ${problem}, and svc keeps API keys there. ` +
      'Use a directory only you can write (SVC_CONFIG_DIR chooses it), or fix its owner and mode yourself.',
  );
}
