/** Changes to profiles that are not about one key on the server: login, logout, and the profiles themselves. */
import type { KeyList } from '../../client/api.js';
import { keyHint } from '../../contract/key-format.js';
import { DEFAULT_BASE_URL } from '../../contract/paths.js';
import { savedKeyHint } from '../config/file.js';
import type { KeyringError } from '../secret-store/keyring.js';
import type { KeyStore, KeyStoreContext, Moved } from '../secret-store/saved-key.js';
import { InterruptedError, loginCommand, UsageError } from '../errors/errors.js';
import { clip } from '../text/text.js';
import { nearProfile } from '../domain/suggest.js';
import type { ProfileSession } from '../session/session.js';
import { knownProfiles, profilesOf, withKey } from '../session/session.js';

export interface LoggedIn {
  /** The whole key list, read after the check: the key-health step learns the new key's expiry from it. Undefined when it could not be read. */
  list: KeyList | undefined;
  /** What stopped svc reading the whole list (the key works all the same), or null. */
  listFailure: unknown;
  url: string;
  hint: string;
  configPath: string;
  /** Where the key was saved. */
  store: KeyStore;
  /** A keyring entry the profile used before and svc could not delete (the key was saved all the same). */
  leftover: KeyringError | null;
}

/** The saved-key operations' view of a session. The keyring's code is loaded only by the operations that touch it. */
function keyStoreContext(session: ProfileSession): KeyStoreContext {
  return { config: session.config, env: session.io.env, schedule: session.deps.schedule };
}

const savedKey = () => import('../secret-store/saved-key.js');

/**
 * Checks `apiKey` against the server (the key list's first page: a 200
 * proves it) and saves it, where `to` says or else where the profile keeps
 * its key now (the config file for a new profile); an address given for
 * this login (flag or environment) is saved with the key it was checked
 * against. The rest of the list only tells the key's expiry, so pages svc
 * cannot follow cost that, never the login.
 */
export async function logIn(session: ProfileSession, apiKey: string, to?: KeyStore): Promise<LoggedIn> {
  const { client } = await withKey(session, { apiKey, source: 'login' });
  await client.probeKeyList();
  let list: KeyList | undefined;
  let listFailure: unknown = null;
  try {
    list = await client.listAllKeys();
  } catch (error) {
    if (error instanceof InterruptedError) throw error;
    listFailure = error;
  }
  const { url, source } = session.endpoint;
  const { saveKey } = await savedKey();
  const { store, leftover } = await saveKey(keyStoreContext(session), session.profileName, apiKey, {
    to,
    patch: (profile) => ({
      ...profile,
      baseUrl: source === 'flag' || source === 'env' ? url : profile.baseUrl,
      // What was remembered about the old key is not about this one.
      keyExpiry: undefined,
      serverInstance: client.serverInstance ?? undefined,
    }),
  });
  return { list, listFailure, url, hint: keyHint(apiKey), configPath: session.config.path, store, leftover };
}

/** Forgets the profile's key, from the keyring too; `hint` is null when it had none. */
export async function logOut(session: ProfileSession): Promise<{ hint: string | null; leftover: KeyringError | null }> {
  const { forgetKey } = await savedKey();
  return forgetKey(keyStoreContext(session), session.profileName, { removeProfile: false });
}

/** `svc profile move-key`: the profile's key, moved into the keyring or back into the config file. */
export async function moveProfileKey(session: ProfileSession, name: string, to: KeyStore): Promise<Moved> {
  checkExists(session, name);
  const { moveKey } = await savedKey();
  return moveKey(keyStoreContext(session), name, to);
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
  /** Where it keeps its key; null when it has none. */
  store: KeyStore | null;
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
      hint: savedKeyHint(profile),
      store: profile.keyring ? 'keyring' : profile.apiKey ? 'file' : null,
      baseUrl: profile.baseUrl ?? null,
      server: profile.baseUrl ?? DEFAULT_BASE_URL,
      rotationPending: profile.pendingRotation !== undefined,
    };
  });
  return { profiles, defaultName, configPath: config.path };
}

/** A profile name given as an argument must name one that exists (exit 2 otherwise, naming those that do). */
function checkExists(session: ProfileSession, name: string): void {
  if (!profilesOf(session.config).includes(name)) throw noSuchProfile(session, name);
}

function noSuchProfile(session: ProfileSession, name: string): UsageError {
  const near = nearProfile(name, profilesOf(session.config), (profile) => `'${clip(profile, 200)}'`);
  return new UsageError([`Profile '${clip(name, 200)}' does not exist; ${knownProfiles(session.config)}.${near}`, `\`${loginCommand(name)}\` creates it with a key.`]);
}

/** The profile was removed by another svc between the check and the locked change. */
class ProfileVanished extends Error {}

/** Makes `name` the default profile, saved in the config file: every command without --profile or SVC_PROFILE uses it. */
export async function useProfile(session: ProfileSession, name: string): Promise<{ configPath: string }> {
  checkExists(session, name);
  try {
    await session.config.update(
      name,
      (profile) => {
        // Checked again under the lock (`default` always exists): a `profile remove` since the check above would leave the default naming no profile.
        if (name !== 'default' && Object.keys(profile).length === 0) throw new ProfileVanished();
        return { ...profile };
      },
      { setDefault: true },
    );
  } catch (error) {
    throw error instanceof ProfileVanished ? noSuchProfile(session, name) : error;
  }
  return { configPath: session.config.path };
}

/**
 * Removes the profile and its saved key (the key itself stays valid); when
 * it was the default, `default` is the default again. Returns the removed
 * key's hint, or null when it had none.
 */
export async function removeProfile(
  session: ProfileSession,
  name: string,
): Promise<{ hint: string | null; wasDefault: boolean; leftover: KeyringError | null }> {
  checkExists(session, name);
  const wasDefault = (session.config.defaultProfile() ?? 'default') === name;
  const { forgetKey } = await savedKey();
  const { hint, leftover } = await forgetKey(keyStoreContext(session), name, { removeProfile: true, setDefault: false });
  return { hint, wasDefault: wasDefault && name !== 'default', leftover };
}
