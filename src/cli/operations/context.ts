/**
 * What operations run with, made from a session by one function per kind.
 * None holds the renderer, the prompter or the terminal, so that by its
 * type an operation cannot print or ask: what a person is to see comes
 * back as data, or goes through a function its caller hands it. The
 * clients they hold and make show their own waits, as every client does.
 */
import type { ApiClient } from '../../client/api.js';
import type { ConfigStore, Profile } from '../config/store.js';
import type { CliError } from '../errors/errors.js';
import type { KeyStoreContext } from '../secret-store/saved-key.js';
import type { Endpoint } from '../session/endpoint.js';
import { noKeyError, profileSession, profilesOf, withKey, type Credentials, type KeySession, type ProfileSession, type ProfileSource } from '../session/session.js';
import type { Deps } from '../terminal/deps.js';

/** An operation on keys: the client, the signals it listens for and the clock. */
export interface KeysContext {
  client: ApiClient;
  onSignal: Deps['onSignal'];
  now: Deps['now'];
  sleep: Deps['sleep'];
}

export function keysContext(session: KeySession): KeysContext {
  return { client: session.client, onSignal: session.deps.onSignal, now: session.deps.now, sleep: session.deps.sleep };
}

/**
 * A client for `credentials` to the command's server, as the session makes
 * one (refused before any request where the key may not go); `graceMs`
 * later on the command's deadline, for time that was the person's, not
 * the server's.
 */
export type Connect = (credentials: Credentials, graceMs?: number) => Promise<ApiClient>;

/** An operation on the profiles: the config, the profile the command resolved to, where its key is kept, and the means to check a key. */
export interface ProfileContext {
  config: ConfigStore;
  profileName: string;
  /** The profile as it was when the command started. */
  profile: Readonly<Profile>;
  endpoint: Endpoint;
  keyStore: KeyStoreContext;
  connect: Connect;
  now: Deps['now'];
}

export function profileContext(session: ProfileSession): ProfileContext {
  const { config, profileName, profile, endpoint, io, deps } = session;
  return {
    now: deps.now,
    config,
    profileName,
    profile,
    endpoint,
    keyStore: { config, env: io.env, schedule: deps.schedule },
    connect: async (credentials, graceMs = 0) =>
      (await withKey(graceMs === 0 ? session : { ...session, deadlineMs: session.deadlineMs + graceMs, waitUntilMs: session.waitUntilMs + graceMs }, credentials)).client,
  };
}

/** An operation on keys that reads or changes the profile too (a rotation): both, and the key the client sends. */
export interface ProfileKeysContext extends KeysContext, ProfileContext {
  credentials: Credentials;
}

export function profileKeysContext(session: KeySession): ProfileKeysContext {
  return { ...keysContext(session), ...profileContext(session), credentials: session.credentials };
}

/** `svc status`: the profile, how it was chosen, its key if one was found, and why none was. */
export interface StatusContext extends ProfileContext {
  profileSource: ProfileSource;
  profileFile: string | null;
  credentials: Credentials | null;
  /** Why the profile's key could not be read from the keyring. */
  keyFailure: CliError | undefined;
  /** Why there is no key to use (exit 3). */
  noKey: () => CliError;
}

export function statusContext(session: ProfileSession): StatusContext {
  const { profileSource, profileFile, credentials, keyFailure } = session;
  return { ...profileContext(session), profileSource, profileFile, credentials, keyFailure, noKey: () => noKeyError(session) };
}

/** `svc status --all`: every profile, and the status context of each, its own key to its own server. */
export interface AllProfilesContext {
  profiles: string[];
  /** The profile the command resolved to. */
  active: string;
  defaultName: string;
  statusOf(profile: string): Promise<StatusContext>;
}

export function allProfilesContext(session: ProfileSession): AllProfilesContext {
  const { config } = session;
  return {
    profiles: profilesOf(config),
    active: session.profileName,
    defaultName: config.defaultProfile() ?? 'default',
    statusOf: async (profile) => statusContext(await profileSession(session, profile)),
  };
}
