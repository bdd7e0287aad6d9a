import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import Conf from 'conf';
import { CliError } from '../errors.js';

export interface Profile {
  apiKey?: string;
  baseUrl?: string;
}

interface ConfigShape {
  profiles: Record<string, Profile>;
}

/** The profiles file, readable and writable by its owner alone. */
export interface ConfigStore {
  readonly path: string;
  getProfile(name: string): Profile;
  setProfile(name: string, profile: Profile): void;
  profileNames(): string[];
}

const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

export function configDir(env: NodeJS.ProcessEnv): string {
  if (env.SVC_CONFIG_DIR) return env.SVC_CONFIG_DIR;
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'svc');
}

export function openConfig(env: NodeJS.ProcessEnv): ConfigStore {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  // mkdir's mode only applies to a directory it creates; an older, looser
  // one is tightened here, and so is a file written by hand or another tool.
  chmodSync(dir, DIR_MODE);
  const file = join(dir, 'config.json');
  if (existsSync(file)) chmodSync(file, FILE_MODE);

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
      if (profile.apiKey === undefined && profile.baseUrl === undefined) delete profiles[name];
      else profiles[name] = profile;
      conf.set('profiles', profiles);
    },
    profileNames() {
      return Object.keys(conf.store.profiles).sort();
    },
  };
}
