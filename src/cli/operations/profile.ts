/** Changes to profiles that are not about one key on the server: login, logout, and the profiles themselves. */
import type { KeyList } from '../../client/api.js';
import { keyHint } from '../../contract/key-format.js';
import { DEFAULT_BASE_URL } from '../../contract/paths.js';
import { loginCommand, UsageError } from '../errors.js';
import { clip } from '../render/text.js';
import type { ProfileSession } from '../session.js';
import { knownProfiles, profilesOf, withKey } from '../session.js';

export interface LoggedIn {
  /** The key list the check read: the key-health step learns the new key's expiry from it. */
  list: KeyList;
  url: string;
  hint: string;
  configPath: string;
}

/**
 * Checks `apiKey` against the server (by reading the key list) and saves
 * it; an address given for this login (flag or environment) is saved with
 * the key it was checked against.
 */
export async function logIn(session: ProfileSession, apiKey: string): Promise<LoggedIn> {
  const { client } = await withKey(session, { apiKey, source: 'login' });
  const list = await client.listAllKeys();
  const { url, source } = session.endpoint;
  await session.config.update(session.profileName, (profile) => ({
    ...profile,
    apiKey,
    baseUrl: source === 'flag' || source === 'env' ? url : profile.baseUrl,
    // What was remembered about the old key is not about this one.
    keyExpiry: undefined,
    serverInstance: client.serverInstance ?? undefined,
  }));
  return { list, url, hint: keyHint(apiKey), configPath: session.config.path };
}

/** Forgets the profile's key; returns its hint, or null when it had none. */
export async function logOut(session: ProfileSession): Promise<string | null> {
  let removed: string | null = null;
  await session.config.update(session.profileName, ({ apiKey, keyExpiry: _, serverInstance: __, ...rest }) => {
    removed = apiKey ? keyHint(apiKey) : null;
    return rest;
  });
  return removed;
}

/** One profile as `svc profile list` tells it. */
export interface ProfileEntry {
  name: string;
  /** Used when neither --profile nor SVC_PROFILE names one. */
  isDefault: boolean;
  /** The profile this command resolved to. */
  isActive: boolean;
  /** The saved key's hint; null when it has none. */
  hint: string | null;
  /** The address saved with it; null for the local default. */
  baseUrl: string | null;
  /** Where its key goes: its address, else the local default. */
  server: string;
  /** A `keys rotate --overlap` is not finished. */
  rotationPending: boolean;
}

export interface ProfileListing {
  profiles: ProfileEntry[];
  defaultName: string;
  configPath: string;
}

/** Every profile that exists (docs/contract.md §C1), with its key's hint and address; reads no server. */
export function listProfiles(session: ProfileSession): ProfileListing {
  const { config } = session;
  const defaultName = config.defaultProfile() ?? 'default';
  const profiles = profilesOf(config).map((name): ProfileEntry => {
    const profile = config.getProfile(name);
    return {
      name,
      isDefault: name === defaultName,
      isActive: name === session.profileName,
      hint: profile.apiKey ? keyHint(profile.apiKey) : null,
      baseUrl: profile.baseUrl ?? null,
      server: profile.baseUrl ?? DEFAULT_BASE_URL,
      rotationPending: profile.pendingRotation !== undefined,
    };
  });
  return { profiles, defaultName, configPath: config.path };
}

/** A profile name given as an argument must name one that exists (exit 2 otherwise, naming those that do). */
function checkExists(session: ProfileSession, name: string): void {
  if (!profilesOf(session.config).includes(name)) {
    throw new UsageError([
      `Profile '${clip(name, 200)}' does not exist; ${knownProfiles(session.config)}.`,
      `\`${loginCommand(name)}\` creates it with a key.`,
    ]);
  }
}

/** Makes `name` the default profile, saved in the config file: every command without --profile or SVC_PROFILE uses it. */
export async function useProfile(session: ProfileSession, name: string): Promise<{ configPath: string }> {
  checkExists(session, name);
  await session.config.update(name, (profile) => ({ ...profile }), { setDefault: true });
  return { configPath: session.config.path };
}

/**
 * Removes the profile and its saved key (the key itself stays valid); when
 * it was the default, `default` is the default again. Returns the removed
 * key's hint, or null when it had none.
 */
export async function removeProfile(session: ProfileSession, name: string): Promise<{ hint: string | null; wasDefault: boolean }> {
  checkExists(session, name);
  const wasDefault = (session.config.defaultProfile() ?? 'default') === name;
  let hint: string | null = null;
  await session.config.update(
    name,
    (profile) => {
      hint = profile.apiKey ? keyHint(profile.apiKey) : null;
      return undefined;
    },
    { setDefault: false },
  );
  return { hint, wasDefault: wasDefault && name !== 'default' };
}
