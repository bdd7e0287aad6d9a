/**
 * `keys rotate` (docs/contract.md §C8): a new key with the old one's name
 * and expiry, shown before the old key is touched, then the old key
 * revoked, disabled, or (with --overlap) kept until --finish. What the
 * person sees and answers comes through the caller's hooks.
 */
import type { ApiClient } from '../../client/api.js';
import type { KeyView } from '../../client/key-view.js';
import { savedKeyHint } from '../config/file.js';
import type { PendingRotation, Profile } from '../config/store.js';
import type { Deps } from '../terminal/deps.js';
import { CliError, InterruptedError, PromptCancelledError, SecretNotWrittenError } from '../errors/errors.js';
import {
  holderChanged,
  noRotationPending,
  notRetired,
  oldKeyLeft,
  overlapUntracked,
  profileUsesKey,
  rotationPending,
  stoppedBeforeSave,
  stoppedSaving,
  stoppedWhileRetiring,
} from '../errors/rotate.js';
import { keyHint } from '../../contract/key-format.js';
import { isKeyInUse, isNotFound, replacementExpiry } from '../domain/keys.js';
import { keyState, stillDoes, worthRevoking } from '../domain/key-state.js';
import { DeliveryFailedError } from '../errors/delivery-failed.js';
import type { ProfileKeysContext } from './context.js';
import { SecretNotFoundError } from '../errors/create.js';
import { createKey, type CreateWatch, type NewKey } from './create.js';
import { viewKeyOrNamed } from './keys.js';

export interface RotateOptions {
  disableOld?: boolean;
  save?: boolean;
  overlap?: boolean;
}

export interface RotateHooks {
  /** What the create watches while its request is out (Ctrl-C). */
  watch: CreateWatch;
  /** Asked once the old key is read, before anything is made: resolves to go ahead, throws (PromptCancelledError) to stop. */
  proceed(old: KeyView): Promise<void>;
  /**
   * Shows the new key, its secret above all; called before the old key is
   * touched, which waits until the secret was written. Throws
   * SecretNotFoundError when there is no secret to show, SecretNotWrittenError
   * when it could not be written.
   */
  show(created: NewKey): Promise<void>;
  /**
   * Given instead of `show` when the command hands the secret to where it is
   * used (--to-file, --to-command): delivers it, or prints it and throws
   * (DeliveryFailedError). Before the old key is touched, as `show`.
   */
  deliver?(created: NewKey): Promise<void>;
  /** Asked when profiles hold the old key and --save was not given: save the new one there? False where nobody can be asked. */
  confirmSave(profiles: readonly string[]): Promise<boolean>;
}

export interface Rotation {
  /** The old key's id, also when it was named by its name. */
  oldId: string;
  created: NewKey;
  old: KeyView;
  /** The server's answer about the old key (revoked, or its disabled record); null when it was left as it was. */
  previous: unknown;
  /**
   * What happened to the old key. 'gone': it was no longer there when this
   * run went to revoke or disable it, though this run had read it: another
   * run (a second rotation of the same key, a revoke) ended it meanwhile.
   */
  retired: 'revoked' | 'disabled' | 'gone' | 'kept-overlap' | 'kept-unsaved';
  /** The profiles that held the old key; the new key was saved to each of them unless `retired` is 'kept-unsaved'. */
  holders: string[];
  /** The old key was the profile's (true), not (false), or the server shows no hints (null). */
  replacedKeyInUse: boolean | null;
  /** The old record did not say when it expires, so the new key does not expire. */
  expiryUnknown: boolean;
  /** The new key anchors to another workspace than the old. */
  workspaceMoved: { from: string; to: string } | null;
  pending?: PendingRotation;
}

/** `arg` is the old key's id, or its name when exactly one key has it (resolved after the checks that need no request). */
export async function rotateKey(ctx: ProfileKeysContext, arg: string, opts: RotateOptions, hooks: RotateHooks): Promise<Rotation> {
  const { client, profileName } = ctx;
  const pending = opts.overlap ? ctx.config.getProfile(profileName).pendingRotation : undefined;
  if (pending) throw rotationPending(profileName, pending);
  const { view: old, id } = await viewKeyOrNamed(client, arg, 'rotate');
  await hooks.proceed(old);
  const replacedKeyInUse = isKeyInUse(old, client.keyHint);
  const expiry = replacementExpiry(old, client.serverNow(), (atMs) => client.marks.expiry(atMs, client.serverNow()));
  const name = old.name ?? id;
  const created = await createKey(client, expiry.expiresAt === null ? { name } : { name, expiresAt: expiry.expiresAt }, hooks.watch, [id]);
  let graceMs: number | null;
  try {
    graceMs = await handOver(ctx, created, hooks);
  } catch (error) {
    if (error instanceof SecretNotFoundError || error instanceof DeliveryFailedError || error instanceof SecretNotWrittenError) throw oldKeyLeft(error, id);
    throw error;
  }
  // The requests after a delivery go with a client whose deadline gave the delivery's time back.
  const restClient = graceMs === null ? client : await ctx.connect(ctx.credentials, graceMs);
  const [from, to] = [old.workspaceId, created.view.workspaceId];
  const base = {
    oldId: id,
    created,
    old,
    previous: null,
    saved: false,
    replacedKeyInUse,
    expiryUnknown: expiry.unknown,
    workspaceMoved: from !== null && to !== null && from !== to ? { from, to } : null,
  };

  // Every profile that holds the old key would be left with a dead one: each gets the new key, or the old key stays.
  const holders = profilesHolding(ctx, old);
  const result = { ...base, holders };
  if (holders.length > 0) {
    if (!(await decideSave(id, old, created, holders, opts, hooks))) return { ...result, retired: 'kept-unsaved' };
    await saveNewKey(ctx, id, old.hint!, holders, created);
  }
  if (opts.overlap) return { ...result, retired: 'kept-overlap', pending: await recordOverlap(ctx, id, created) };
  // The key in use is retired with its replacement: with itself, the retry after a lost answer is refused (the
  // key is already revoked or disabled), and work that was done would be reported as not done.
  const retiring = replacedKeyInUse ? await ctx.connect({ apiKey: created.secret!, source: ctx.credentials.source }, graceMs ?? 0) : restClient;
  return { ...result, ...(await retireOldKey(retiring, id, created, opts.disableOld === true, ctx.onSignal)) };
}

/**
 * Shows or delivers the new key. The time a delivery command took is the
 * person's, not the server's: the requests after it get that much back on
 * the command's deadline (the grace returned; null when the key was shown),
 * so a slow `gh secret set` does not leave the old key unrevoked for want of time.
 */
async function handOver(ctx: ProfileKeysContext, created: NewKey, hooks: RotateHooks): Promise<number | null> {
  if (hooks.deliver === undefined) {
    await hooks.show(created);
    return null;
  }
  const began = ctx.now();
  await hooks.deliver(created);
  return ctx.now() - began;
}

/** The profiles whose saved key is `old`, by its hint; none can be told where the server shows no hints. */
function profilesHolding(ctx: ProfileKeysContext, old: KeyView): string[] {
  if (old.hint === null) return [];
  return ctx.config.profileNames().filter((name) => savedKeyHint(ctx.config.getProfile(name)) === old.hint);
}

async function decideSave(id: string, old: KeyView, created: NewKey, holders: readonly string[], opts: RotateOptions, hooks: RotateHooks): Promise<boolean> {
  if (opts.save) return true;
  try {
    return await hooks.confirmSave(holders);
  } catch (error) {
    if (!(error instanceof PromptCancelledError)) throw error;
    // Withdrawing the question stops the rotation where it stands: nothing more is changed.
    const state = keyState(old, created.nowMs);
    throw stoppedBeforeSave(created.view.id, id, { stillDoes: stillDoes(state), worthRevoking: worthRevoking(state) }, holders, error.signal);
  }
}

/**
 * Each profile gets the new key only if it still holds the old one (another
 * svc may have changed it meanwhile), with what is known of the new key's
 * expiry, so that the expiry warning is about the key the profile holds.
 */
async function saveNewKey(ctx: ProfileKeysContext, id: string, oldHint: string, holders: readonly string[], created: NewKey): Promise<void> {
  const secret = created.secret!;
  const { view } = created;
  const keyExpiry =
    view.id !== null && view.expiresKnown ? { hint: keyHint(secret), id: view.id, expiresAt: view.expiresAt === null ? null : new Date(view.expiresAt).toISOString() } : undefined;
  const saved: string[] = [];
  // Each where it keeps its key: the config file, or the OS keyring.
  const { saveKey } = await import('../secret-store/saved-key.js');
  for (const name of holders) {
    let replaced = false;
    try {
      const keep = (profile: Readonly<Profile>) => savedKeyHint(profile) === oldHint;
      replaced = (await saveKey(ctx.keyStore, name, secret, { keep, patch: (profile) => ({ ...profile, keyExpiry }) })).saved;
    } catch (error) {
      // A save stopped by a signal (the wait for another svc's lock) stops the rotation with that signal's code.
      if (error instanceof CliError) throw stoppedSaving(id, saved, error.lines, error);
      throw error;
    }
    if (!replaced) throw stoppedSaving(id, saved, [holderChanged(name)]);
    saved.push(name);
  }
}

/** The old key stays; the profile keeps the pair until --finish or --cancel, so even a crash here forgets nothing. */
async function recordOverlap(ctx: ProfileKeysContext, oldId: string, created: NewKey): Promise<PendingRotation> {
  const newId = created.view.id;
  if (newId === null) throw overlapUntracked(oldId);
  const pendingRotation: PendingRotation = { oldId, newId, since: new Date(ctx.now()).toISOString() };
  await ctx.config.update(ctx.profileName, (profile) => ({ ...profile, pendingRotation }));
  return pendingRotation;
}

async function retireOldKey(
  client: ApiClient,
  id: string,
  created: NewKey,
  disable: boolean,
  onSignal: Deps['onSignal'],
): Promise<{ previous: unknown; retired: 'revoked' | 'disabled' | 'gone' }> {
  const verb = disable ? 'disable' : 'revoke';
  // Ctrl-C here stops at once, but not in silence: the new key exists, and the old one's fate is unknown.
  let interrupt!: (error: Error) => void;
  const interrupted = new Promise<never>((_, reject) => (interrupt = reject));
  const off = onSignal(['SIGINT', 'SIGTERM', 'SIGHUP'], (signal) => interrupt(stoppedWhileRetiring(id, created.view.id, verb, signal)));
  try {
    const retiring = disable
      ? client.setEnabled(id, false).then(async (result) => ({ previous: result.document ?? (await client.getKey(id)).document, retired: 'disabled' as const }))
      : client.revokeKey(id).then(({ answer }) => ({ previous: answer, retired: 'revoked' as const }));
    return await Promise.race([retiring, interrupted]);
  } catch (error) {
    if (error instanceof InterruptedError) throw error;
    // This run read the key before it made the new one: a 404 now is a key ended meanwhile, not a key that never was.
    // Its fate is what the winner of two rotations at once did; nothing is left for this run to retire.
    if (isNotFound(error)) return { previous: { id, revoked: false }, retired: 'gone' };
    throw notRetired(id, created.view.id, verb, (error as Error).message);
  } finally {
    off();
  }
}

/**
 * --finish revokes the old key of the pending rotation, --cancel the new one; a key already gone counts as done.
 * Never the key the profile uses: the profile would be left holding a key that no longer works.
 */
export async function endOverlap(
  ctx: ProfileKeysContext,
  how: 'finish' | 'cancel',
): Promise<{ pending: PendingRotation; id: string; answer: unknown; wasGone: boolean }> {
  const { profileName } = ctx;
  const pending = ctx.config.getProfile(profileName).pendingRotation;
  if (!pending) throw noRotationPending(profileName);
  const id = how === 'finish' ? pending.oldId : pending.newId;
  if (ctx.credentials.source === 'profile' && (await isProfileKey(ctx.client, id))) throw profileUsesKey(profileName, how, id);
  let answer: unknown;
  let wasGone = false;
  try {
    ({ answer } = await ctx.client.revokeKey(id));
  } catch (error) {
    if (!isNotFound(error)) throw error;
    answer = { id, revoked: false };
    wasGone = true;
  }
  await ctx.config.update(profileName, (profile) =>
    profile.pendingRotation?.oldId === pending.oldId && profile.pendingRotation.newId === pending.newId ? { ...profile, pendingRotation: undefined } : { ...profile },
  );
  return { pending, id, answer, wasGone };
}

/** Whether `id` is the key the client sends; a key already gone is not, and a server without hints cannot tell (no). */
async function isProfileKey(client: ApiClient, id: string): Promise<boolean> {
  try {
    return isKeyInUse((await client.getKey(id)).view, client.keyHint) === true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}
