/**
 * A profile's key where the profile keeps it: in the config file (the
 * default), or in the OS keyring, where the profile records only the
 * entry. The writes are ordered so that no failure leaves a profile
 * pointing at a keyring entry that does not hold its key, and none loses
 * a key: the keyring is written before the profile points at it, and an
 * entry is deleted only once no profile points at it.
 */
import { keyHint } from '../../contract/key-format.js';
import type { KeyringRef, Profile } from '../config/file.js';
import type { ConfigStore } from '../config/store.js';
import type { Deps } from '../terminal/deps.js';
import { CliError, ExitCode, loginCommand } from '../errors/errors.js';
import { clip } from '../text/text.js';
import { KeyringError, openKeyring, removeByHand, type Keyring, type KeyringEntry } from './keyring.js';

export { KeyringError };

/** Where a profile keeps its key. */
export type KeyStore = 'file' | 'keyring';

/** What the saved-key operations need of a session. */
export interface KeyStoreContext {
  config: ConfigStore;
  env: NodeJS.ProcessEnv;
  schedule: Deps['schedule'];
}

/** The keyring service every svc entry is filed under. */
export const KEYRING_SERVICE = 'svc';

export function storeOf(profile: Readonly<Profile>): KeyStore {
  return profile.keyring ? 'keyring' : 'file';
}

/** Where `name`'s key goes in the keyring: its entry if it has one, else one named for the profile and its config file, which no other config shares. */
function entryFor(config: ConfigStore, name: string, profile: Readonly<Profile>): KeyringEntry {
  return profile.keyring ? { service: profile.keyring.service, account: profile.keyring.account } : { service: KEYRING_SERVICE, account: `${name}@${config.path}` };
}

function describeEntry(entry: KeyringEntry): string {
  return `service '${clip(entry.service, 200)}', account '${clip(entry.account, 200)}'`;
}

/** The key of a profile that keeps it in the keyring. Throws KeyringError (exit 3), never falls back to the file. */
export async function readKeyringKey(ctx: KeyStoreContext, name: string, ref: KeyringRef): Promise<string> {
  const context = `Profile '${clip(name, 200)}' keeps its key in the OS keyring (${describeEntry(ref)}); svc does not look for it anywhere else.`;
  let secret: string | null;
  try {
    secret = await (await openKeyring(ctx.env, ctx.schedule)).get(ref);
  } catch (error) {
    throw error instanceof KeyringError ? error.about(context) : error;
  }
  if (secret === null) {
    throw new KeyringError(
      `The keyring has no such entry: it was removed outside svc`,
      `Save the key again with \`${loginCommand(name)} --keyring\`, or set SVC_API_KEY.`,
      [context],
    );
  }
  return secret;
}

export interface SaveOptions {
  /** Where the key goes; by default where the profile keeps its key now. */
  to?: KeyStore;
  /** Whether the profile, as the config writer hands it over, is still the one to change (another svc may have changed it). */
  keep?: (profile: Readonly<Profile>) => boolean;
  /** The profile's other changes, made in the same write. */
  patch?: (profile: Readonly<Profile>) => Profile;
}

export interface Saved {
  /** False when `keep` said no: nothing was changed. */
  saved: boolean;
  store: KeyStore;
  /** A keyring entry the profile no longer uses and svc could not delete, with why; the key was saved all the same. */
  leftover: KeyringError | null;
}

/**
 * Saves `secret` as profile `name`'s key. Into the keyring: the entry is
 * written first (a failure changes nothing, KeyringError), then the profile
 * points at it; if that write fails, the entry gets back what it held. Into
 * the file: the profile holds the key first, then the entry it used to
 * point at is deleted.
 */
export async function saveKey(ctx: KeyStoreContext, name: string, secret: string, options: SaveOptions = {}): Promise<Saved> {
  const { config } = ctx;
  const { keep = () => true, patch = (profile) => ({ ...profile }) } = options;
  const before = config.getProfile(name);
  const to = options.to ?? storeOf(before);
  if (to === 'file') {
    let saved = false;
    let dropped: KeyringRef | undefined;
    await config.update(name, (profile) => {
      saved = keep(profile);
      if (!saved) return { ...profile };
      dropped = profile.keyring;
      return { ...patch(profile), apiKey: secret, keyring: undefined };
    });
    return { saved, store: 'file', leftover: dropped ? await deleteEntry(ctx, dropped) : null };
  }

  const entry = entryFor(config, name, before);
  const unsaved = (error: KeyringError) => error.about(`The key was not saved to profile '${clip(name, 200)}' (${describeEntry(entry)} in the OS keyring); nothing was changed.`);
  let keyring: Keyring;
  let previous: string | null;
  try {
    keyring = await openKeyring(ctx.env, ctx.schedule);
    previous = await keyring.get(entry);
    await keyring.set(entry, secret);
  } catch (error) {
    throw error instanceof KeyringError ? unsaved(error) : error;
  }
  let saved = false;
  try {
    await config.update(name, (profile) => {
      // Another svc may have pointed the profile elsewhere meanwhile: then this entry is not its key.
      saved = keep(profile) && (profile.keyring === undefined || sameEntry(profile.keyring, entry));
      if (!saved) return { ...profile };
      return { ...patch(profile), apiKey: undefined, keyring: { ...entry, hint: keyHint(secret) } };
    });
  } catch (error) {
    await restore(keyring, entry, previous);
    throw error;
  }
  if (!saved) await restore(keyring, entry, previous);
  return { saved, store: 'keyring', leftover: null };
}

/** The entry as it was before svc wrote it, as far as the keyring lets: the config error is the one to report. */
async function restore(keyring: Keyring, entry: KeyringEntry, previous: string | null): Promise<void> {
  try {
    if (previous === null) await keyring.delete(entry);
    else await keyring.set(entry, previous);
  } catch {
    // See above: the entry then holds the new key, which no profile points at unless it did before.
  }
}

function sameEntry(a: KeyringEntry, b: KeyringEntry): boolean {
  return a.service === b.service && a.account === b.account;
}

/** Deletes an entry no profile points at any more; a failure is returned, for the caller to report after what was done. */
async function deleteEntry(ctx: KeyStoreContext, entry: KeyringEntry): Promise<KeyringError | null> {
  try {
    await (await openKeyring(ctx.env, ctx.schedule)).delete(entry);
    return null;
  } catch (error) {
    if (!(error instanceof KeyringError)) throw error;
    return new KeyringError(
      `The profile no longer uses the OS keyring entry that held its key (${describeEntry(entry)}), but svc could not delete it: ${error.problem}`,
      `Delete it yourself once the keyring is unlocked: ${removeByHand(entry)}`,
    );
  }
}

export interface Forgotten {
  /** The removed key's hint; null when the profile held none. */
  hint: string | null;
  /** A keyring entry svc could not delete (the profile no longer points at it); null when there was none or it was deleted. */
  leftover: KeyringError | null;
  /** The expiry the profile recorded for that key (null: none); undefined when it recorded none for it. */
  recordedExpiry: string | null | undefined;
}

/**
 * Forgets the profile's key (`svc logout`), or the whole profile (`svc
 * profile remove`): the profile first, so it never points at a deleted
 * entry, then its keyring entry.
 */
export async function forgetKey(ctx: KeyStoreContext, name: string, whole: { removeProfile: boolean; setDefault?: boolean }): Promise<Forgotten> {
  let hint: string | null = null;
  let dropped: KeyringRef | undefined;
  let recordedExpiry: string | null | undefined;
  await ctx.config.update(
    name,
    (profile) => {
      hint = profile.keyring?.hint ?? (profile.apiKey ? keyHint(profile.apiKey) : null);
      dropped = profile.keyring;
      recordedExpiry = hint !== null && profile.keyExpiry?.hint === hint ? profile.keyExpiry.expiresAt : undefined;
      if (whole.removeProfile) return undefined;
      const { apiKey: _key, keyring: _keyring, keyExpiry: _expiry, serverInstance: _instance, ...rest } = profile;
      return rest;
    },
    whole.setDefault === undefined ? {} : { setDefault: whole.setDefault },
  );
  return { hint, leftover: dropped ? await deleteEntry(ctx, dropped) : null, recordedExpiry };
}

export interface Moved {
  from: KeyStore;
  to: KeyStore;
  hint: string;
  /** Where it is now, in words. */
  where: string;
  leftover: KeyringError | null;
}

/** `svc profile move-key NAME --to keyring|file`: the same key, kept elsewhere; moving it where it is already changes nothing. */
export async function moveKey(ctx: KeyStoreContext, name: string, to: KeyStore): Promise<Moved> {
  const profile = ctx.config.getProfile(name);
  const from = storeOf(profile);
  const hint = profile.keyring?.hint ?? (profile.apiKey ? keyHint(profile.apiKey) : null);
  if (hint === null) {
    throw new CliError([`Profile '${clip(name, 200)}' has no saved key to move.`, `\`${loginCommand(name)}${to === 'keyring' ? ' --keyring' : ''}\` saves one.`], ExitCode.unauthenticated);
  }
  const where = (store: KeyStore, ref = profile.keyring) =>
    store === 'file' ? `the config file ${ctx.config.path}` : `the OS keyring (${describeEntry(ref ?? entryFor(ctx.config, name, profile))})`;
  if (from === to) return { from, to, hint, where: where(to), leftover: null };
  if (to === 'keyring') {
    const secret = profile.apiKey!;
    const result = await saveKey(ctx, name, secret, { to, keep: (now) => now.apiKey === secret }).catch((error: unknown) => {
      throw error instanceof KeyringError
        ? error.about(`The key ${hint} of profile '${clip(name, 200)}' was not moved to ${where(to)}; it is still in ${where(from)}, and nothing was changed.`)
        : error;
    });
    if (!result.saved) throw changedMeanwhile(name);
    return { from, to, hint, where: where(to, ctx.config.getProfile(name).keyring), leftover: null };
  }
  const ref = profile.keyring!;
  const secret = await readKeyringKey(ctx, name, ref);
  const result = await saveKey(ctx, name, secret, { to, keep: (now) => now.keyring !== undefined && sameEntry(now.keyring, ref) });
  if (!result.saved) throw changedMeanwhile(name);
  return { from, to, hint, where: where(to), leftover: result.leftover };
}

function changedMeanwhile(name: string): CliError {
  return new CliError(`Profile '${clip(name, 200)}' was changed by another svc while its key was being moved; nothing was moved. Run the command again.`);
}
