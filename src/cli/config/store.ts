import { chmodSync, existsSync, lstatSync, mkdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import Conf from 'conf';
import { readEnv } from '../environment.js';
import { CliError } from '../errors.js';

export interface Profile {
  apiKey?: string;
  baseUrl?: string;
  /** When the saved key expires, as last seen in a key list; `hint` says which key that was. */
  keyExpiry?: { hint: string; id: string; expiresAt: string | null };
  /** A `keys rotate --overlap` not yet finished or cancelled (docs/contract.md §C8). */
  pendingRotation?: PendingRotation;
}

export interface PendingRotation {
  oldId: string;
  newId: string;
  since: string;
}

interface ConfigShape {
  profiles: Record<string, Profile>;
}

/** The profiles file, readable and writable by its owner alone. */
export interface ConfigStore {
  readonly path: string;
  getProfile(name: string): Profile;
  setProfile(name: string, profile: Profile): void;
  /** Every profile change goes through here: `change` sees the profile as it is now; undefined removes it. */
  update(name: string, change: (profile: Readonly<Profile>) => Profile | undefined): Profile | undefined;
  profileNames(): string[];
}

const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

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
 * svc's own file, with a warning.
 */
export function openConfig(env: NodeJS.ProcessEnv, warn: (line: string) => void): ConfigStore {
  const dir = configDir(env);
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true, mode: DIR_MODE });
    chmodSync(dir, DIR_MODE);
  }
  refuseUnsafe(dir, 'config directory', statSync(dir));
  const file = join(dir, 'config.json');
  const link = lstatOrNull(file);
  if (link?.isSymbolicLink()) {
    const target = realpathSync(file);
    refuseUnsafe(dirname(target), `directory of the config file's link target ${target}`, statSync(dirname(target)));
    refuseUnsafe(target, `config file's link target`, statSync(target));
  } else if (link) {
    refuseUnsafe(file, 'config file', link);
  }
  if (link && (statSync(file).mode & 0o077) !== 0) {
    chmodSync(file, FILE_MODE);
    warn(`${file} was readable by other users; it holds API keys, so its mode is now 0600.`);
  }

  let conf: Conf<ConfigShape>;
  try {
    conf = new Conf<ConfigShape>({
      cwd: dir,
      configName: 'config',
      projectName: 'svc',
      configFileMode: FILE_MODE,
      defaults: { profiles: {} },
    });
    // Conf parses lazily; reading here turns a corrupt file into one clear error.
    void conf.store;
  } catch (error) {
    throw new CliError(
      `The config file ${file} could not be read (${(error as Error).message.split('\n')[0]}). ` +
        'Fix it, or move it aside and run `svc login` again.',
    );
  }

  return {
    path: conf.path,
    getProfile(name) {
      const profile = conf.store.profiles[name];
      return profile && typeof profile === 'object' ? { ...profile } : {};
    },
    setProfile(name, profile) {
      const profiles = { ...conf.store.profiles };
      if (Object.values(profile).every((value) => value === undefined)) delete profiles[name];
      else profiles[name] = profile;
      conf.set('profiles', profiles);
    },
    update(name, change) {
      const profiles = { ...conf.store.profiles };
      const current = profiles[name];
      const next = change(current && typeof current === 'object' ? { ...current } : {});
      if (next === undefined || Object.values(next).every((value) => value === undefined)) delete profiles[name];
      else profiles[name] = next;
      conf.set('profiles', profiles);
      return next;
    },
    profileNames() {
      return Object.keys(conf.store.profiles).sort();
    },
  };
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
