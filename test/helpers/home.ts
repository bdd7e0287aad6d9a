import { join } from 'node:path';

/**
 * Where svc and the programs the tests drive keep files: svc's config
 * (SVC_CONFIG_DIR, else $XDG_CONFIG_HOME/svc, else ~/.config/svc) and its
 * compile cache ($XDG_CACHE_HOME/svc, else ~/.cache/svc); fish, npm and
 * the rest go by HOME and XDG too.
 */
export const HOME_VARS = ['HOME', 'XDG_CONFIG_HOME', 'XDG_CACHE_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'SVC_CONFIG_DIR'] as const;

/** All of HOME_VARS inside `home`, as a user whose home it were would have them. */
export function homeVars(home: string): Record<(typeof HOME_VARS)[number], string> {
  return {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    SVC_CONFIG_DIR: join(home, '.config', 'svc'),
  };
}

/** This test file's HOME_VARS (test/setup/home.ts), for a child process that is given an environment of its own. */
export function homeEnv(): Record<(typeof HOME_VARS)[number], string> {
  return Object.fromEntries(HOME_VARS.map((name) => [name, process.env[name]!])) as Record<(typeof HOME_VARS)[number], string>;
}
