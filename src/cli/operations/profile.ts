/** Changes to a profile that are not about one key on the server: login and logout. */
import type { KeyList } from '../../client/api.js';
import { keyHint } from '../../contract/key-format.js';
import type { ProfileSession } from '../session.js';
import { withKey } from '../session.js';

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
  }));
  return { list, url, hint: keyHint(apiKey), configPath: session.config.path };
}

/** Forgets the profile's key; returns its hint, or null when it had none. */
export async function logOut(session: ProfileSession): Promise<string | null> {
  let removed: string | null = null;
  await session.config.update(session.profileName, ({ apiKey, keyExpiry: _, ...rest }) => {
    removed = apiKey ? keyHint(apiKey) : null;
    return rest;
  });
  return removed;
}
