/** Changes to profiles that are not about one key on the server: login, logout, and the profiles themselves. */
import type { KeyList } from '../../client/api.js';
import { keyHint } from '../../contract/key-format.js';
import { DEFAULT_BASE_URL } from '../../contract/paths.js';
import { holdsKey, savedKeyHint } from '../config/file.js';
import type { Profile } from '../config/store.js';
import { sameServer, type Endpoint } from '../session/endpoint.js';
import type { KeyringError } from '../secret-store/keyring.js';
import type { Forgotten, KeyStore, Moved } from '../secret-store/saved-key.js';
import { recordedKeyState, type KeyState } from '../domain/key-state.js';
import { InterruptedError, type UsageError } from '../errors/errors.js';
import { noSuchProfileArgument } from '../errors/profiles.js';
import { clip } from '../text/text.js';
import { nearProfile } from '../domain/suggest.js';
import { knownProfiles, profilesOf } from '../session/session.js';
import type { ProfileContext } from './context.js';

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
  /** What the profile held before that this login replaced; null when nothing. */
  replaced: Replaced | null;
}

/** A profile's key or server that a login replaces (docs/contract.md §C2): what it held, by hint, and where it pointed. */
export interface Replaced {
  /** The key it held; null when it held none (only its server changes). */
  hint: string | null;
  /** The server it pointed at: its saved address, else the local default. */
  baseUrl: string;
  /** The server the login points it at. */
  newBaseUrl: string;
}

/** The address a login saves: one given for it (flag or environment), else the profile's own. */
function loginBaseUrl(profile: Readonly<Profile>, endpoint: Endpoint): string | undefined {
  return endpoint.source === 'flag' || endpoint.source === 'env' ? endpoint.url : profile.baseUrl;
}

/**
 * What logging in to `profile` through `endpoint` would replace: a key it
 * holds (unless `apiKey` is that very key, for the same server) or a server
 * it points at that is not the login's. Null when nothing: a new or empty
 * profile, or the same key again. Without `apiKey` (asked before the key is
 * typed) any key it holds counts.
 */
export function loginReplaces(profile: Readonly<Profile>, endpoint: Endpoint, apiKey?: string): Replaced | null {
  const hint = savedKeyHint(profile);
  const baseUrl = profile.baseUrl ?? DEFAULT_BASE_URL;
  const newBaseUrl = loginBaseUrl(profile, endpoint) ?? DEFAULT_BASE_URL;
  const moves = !sameServer(baseUrl, newBaseUrl) && (hint !== null || profile.baseUrl !== undefined);
  const sameKey = apiKey !== undefined && holdsKey(profile, apiKey);
  if (!moves && (hint === null || sameKey)) return null;
  return { hint, baseUrl, newBaseUrl };
}

/** The keyring's code is loaded only by the operations that touch it. */
const savedKey = () => import('../secret-store/saved-key.js');

/**
 * Checks `apiKey` against the server (the key list's first page: a 200
 * proves it) and saves it, where `to` says or else where the profile keeps
 * its key now (the config file for a new profile); an address given for
 * this login (flag or environment) is saved with the key it was checked
 * against. The rest of the list only tells the key's expiry, so pages svc
 * cannot follow cost that, never the login.
 */
export async function logIn(ctx: ProfileContext, apiKey: string, to?: KeyStore): Promise<LoggedIn> {
  const client = await ctx.connect({ apiKey, source: 'login' });
  await client.probeKeyList();
  let list: KeyList | undefined;
  let listFailure: unknown = null;
  try {
    list = await client.listAllKeys();
  } catch (error) {
    if (error instanceof InterruptedError) throw error;
    listFailure = error;
  }
  const { url } = ctx.endpoint;
  const { saveKey } = await savedKey();
  let replaced: Replaced | null = null;
  const { store, leftover } = await saveKey(ctx.keyStore, ctx.profileName, apiKey, {
    to,
    patch: (profile) => {
      // Told from the profile as it is under the lock: another svc may have changed it since this one read it.
      replaced = loginReplaces(profile, ctx.endpoint, apiKey);
      return {
        ...profile,
        baseUrl: loginBaseUrl(profile, ctx.endpoint),
        // What was remembered about the old key is not about this one.
        keyExpiry: undefined,
        serverInstance: client.serverInstance ?? undefined,
      };
    },
  });
  return { list, listFailure, url, hint: keyHint(apiKey), configPath: ctx.config.path, store, leftover, replaced };
}

/** Forgets the profile's key, from the keyring too; `hint` is null when it had none. */
/** What a profile forgot: the key's hint (null: it held none), what the key still does, and a keyring entry svc could not delete. */
export interface Forgot {
  hint: string | null;
  /** From the expiry the profile recorded for it: svc does not ask the server. Null when the profile held no key. */
  state: KeyState | null;
  leftover: KeyringError | null;
}

export async function logOut(ctx: ProfileContext): Promise<Forgot> {
  const { forgetKey } = await savedKey();
  return forgot(ctx, await forgetKey(ctx.keyStore, ctx.profileName, { removeProfile: false }));
}

function forgot(ctx: ProfileContext, { hint, leftover, recordedExpiry }: Forgotten): Forgot {
  return { hint, leftover, state: hint === null ? null : recordedKeyState(recordedExpiry, ctx.now()) };
}

/** `svc profile move-key`: the profile's key, moved into the keyring or back into the config file. */
export async function moveProfileKey(ctx: ProfileContext, name: string, to: KeyStore): Promise<Moved> {
  checkExists(ctx, name);
  const { moveKey } = await savedKey();
  return moveKey(ctx.keyStore, name, to);
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
export function listProfiles(ctx: ProfileContext): ProfileListing {
  const { config } = ctx;
  const defaultName = config.defaultProfile() ?? 'default';
  const profiles = profilesOf(config).map((name): ProfileEntry => {
    const profile = config.getProfile(name);
    return {
      name,
      isDefault: name === defaultName,
      isActive: name === ctx.profileName,
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
function checkExists(ctx: ProfileContext, name: string): void {
  if (!profilesOf(ctx.config).includes(name)) throw noSuchProfile(ctx, name);
}

function noSuchProfile({ config }: ProfileContext, name: string): UsageError {
  const near = nearProfile(name, profilesOf(config), (profile) => `'${clip(profile, 200)}'`);
  return noSuchProfileArgument(name, `${knownProfiles(config)}.${near}`);
}

/** The profile was removed by another svc between the check and the locked change. */
class ProfileVanished extends Error {}

/** Makes `name` the default profile, saved in the config file: every command without --profile or SVC_PROFILE uses it. */
export async function useProfile(ctx: ProfileContext, name: string): Promise<{ configPath: string }> {
  checkExists(ctx, name);
  try {
    await ctx.config.update(
      name,
      (profile) => {
        // Checked again under the lock (`default` always exists): a `profile remove` since the check above would leave the default naming no profile.
        if (name !== 'default' && Object.keys(profile).length === 0) throw new ProfileVanished();
        return { ...profile };
      },
      { setDefault: true },
    );
  } catch (error) {
    throw error instanceof ProfileVanished ? noSuchProfile(ctx, name) : error;
  }
  return { configPath: ctx.config.path };
}

/**
 * Removes the profile and its saved key (the key itself is not revoked); when
 * it was the default, `default` is the default again. Returns the removed
 * key's hint, or null when it had none.
 */
export async function removeProfile(
  ctx: ProfileContext,
  name: string,
): Promise<Forgot & { wasDefault: boolean }> {
  checkExists(ctx, name);
  const wasDefault = (ctx.config.defaultProfile() ?? 'default') === name;
  const { forgetKey } = await savedKey();
  return { ...forgot(ctx, await forgetKey(ctx.keyStore, name, { removeProfile: true, setDefault: false })), wasDefault: wasDefault && name !== 'default' };
}
