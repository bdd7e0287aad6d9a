import { Option, type Command } from 'commander';
import type { ApiClient } from '../../../client/api.js';
import type { KeyView } from '../../../client/key-view.js';
import type { Context } from '../../context.js';
import type { PendingRotation } from '../../config/store.js';
import { CliError, UsageError } from '../../errors.js';
import { printJson, visible } from '../../output.js';
import type { App } from '../../program.js';
import { createKey, SecretNotFoundError, showNewKey, type NewKey } from '../../new-key.js';
import { checkKeyId, isKeyInUse, isNotFound, keyNotFound, replacementExpiry } from '../../keys.js';

export interface RotateOptions {
  disableOld?: boolean;
  save?: boolean;
  overlap?: boolean;
  finish?: boolean;
  cancel?: boolean;
}

export function register(keys: Command, app: App): void {
  keys
    .command('rotate')
    .description('replace a key: create one with the same name and expiry, then revoke (or disable) the old one')
    .argument('[id]', 'the key to replace (none with --finish or --cancel)')
    .addOption(new Option('--disable-old', 'disable the old key instead of revoking it, for a grace period').conflicts('overlap'))
    .option('--save', 'when the old key is the one in use, save the new one to the profile without asking')
    .option('--overlap', 'leave the old key working until `svc keys rotate --finish`, so every consumer can move first')
    .addOption(new Option('--finish', "revoke the old key of the profile's pending --overlap rotation").conflicts(['overlap', 'disableOld', 'cancel']))
    .addOption(new Option('--cancel', "revoke the new key of the profile's pending --overlap rotation instead").conflicts(['overlap', 'disableOld']))
    .addHelpText(
      'after',
      '\nThe new secret is printed once. The new key anchors to your active workspace, which may differ from the old key\'s.\nWith --overlap both keys work until --finish; the profile remembers the rotation, and every command reminds you.\n\nExamples:\n  $ svc keys rotate key_0123abcd\n  $ NEW=$(svc keys rotate key_0123abcd --disable-old)\n  $ svc keys rotate key_0123abcd --save   # the key svc itself uses\n  $ svc keys rotate key_0123abcd --overlap   # later: svc keys rotate --finish',
    )
    .action(app.action(run));
}

export interface Rotation {
  /** The server's document for the new key, secret included, as it came. */
  key: unknown;
  /** The server's answer about the old key (revoked, or its disabled record); null when it was left as it was. */
  previous: unknown;
  /** With --overlap: the rotation the profile now keeps until --finish or --cancel. */
  pending?: PendingRotation;
}

export async function run(ctx: Context, idArg: string | undefined, opts: RotateOptions): Promise<void> {
  if (opts.finish || opts.cancel) {
    if (idArg !== undefined) throw new UsageError('--finish and --cancel take no key id: they act on the pending rotation of the profile.');
    await endOverlap(ctx, opts.finish ? 'finish' : 'cancel');
    return;
  }
  if (idArg === undefined) throw new UsageError('Missing the key id: svc keys rotate <id> (see `svc keys list`).');
  await rotate(ctx, checkKeyId(idArg), opts);
}

/**
 * Shared with the interactive session. The old key is touched only once the
 * new secret has been shown: a rotation that loses the new secret must
 * leave the user the key they had.
 */
export async function rotate(ctx: Context, id: string, opts: RotateOptions): Promise<Rotation> {
  const pending = opts.overlap ? (await ctx.config()).getProfile(ctx.profileName).pendingRotation : undefined;
  if (pending) {
    throw new UsageError(
      `Profile '${ctx.profileName}' already has a pending rotation (${visible(pending.oldId)} → ${visible(pending.newId)}): \`svc keys rotate --finish\` or \`--cancel\` it first.`,
    );
  }
  const client = await ctx.client();
  let old: KeyView;
  try {
    old = (await client.getKey(id)).view;
  } catch (error) {
    throw isNotFound(error) ? keyNotFound(id) : error;
  }
  const replacesKeyInUse = isKeyInUse(old, client.keyHint);
  const expiry = replacementExpiry(old, client.serverNow());
  const name = old.name ?? id;
  const created = await createKey(ctx, client, expiry.expiresAt === null ? { name } : { name, expiresAt: expiry.expiresAt });

  let previous: unknown;
  try {
    showNewKey(ctx, created, false);
    if (expiry.unknown) ctx.msg.warn(`svc could not read when ${visible(id)} expires, so the new key does not expire.`);
    const [from, to] = [old.workspaceId, created.view.workspaceId];
    if (from !== null && to !== null && from !== to) {
      ctx.msg.warn(
        `The new key anchors to workspace ${visible(to)} (your active one), not ${visible(from)}: its rate limit and plan follow ${visible(to)}.`,
      );
    }
    if (replacesKeyInUse) await offerToSave(ctx, client, created.secret!, opts);
    if (opts.overlap) return await recordOverlap(ctx, id, created);
    else if (replacesKeyInUse === null && client.origin.keySource === 'profile') {
      ctx.msg.warn(`This server shows no key hints, so svc cannot tell whether ${visible(id)} is the key profile '${ctx.profileName}' uses; if it is, run \`svc login\` with the new one.`);
    }
    previous = await retireOldKey(client, id, created, opts);
  } catch (error) {
    // --json owes its one document, the new secret in it, whatever failed after the create.
    if (ctx.globals.json) printJson(ctx.io, { key: created.document, previous: null } satisfies Rotation);
    if (error instanceof SecretNotFoundError) throw new CliError(`${error.message}\nThe old key ${id} was left as it was.`);
    throw error;
  }
  ctx.msg.success(
    `${opts.disableOld ? 'Disabled' : 'Revoked'} the old key ${visible(id)}; ${created.view.id === null ? 'the new key' : visible(created.view.id)} replaces it.`,
  );
  const rotation: Rotation = { key: created.document, previous };
  if (ctx.globals.json) printJson(ctx.io, rotation);
  return rotation;
}

/** The old key stays; the profile keeps the pair until --finish or --cancel, so even a crash here forgets nothing. */
async function recordOverlap(ctx: Context, oldId: string, created: NewKey): Promise<Rotation> {
  const newId = created.view.id;
  if (newId === null) {
    throw new CliError(`The server's answer gives no id for the new key, so svc cannot track this rotation: revoke ${visible(oldId)} yourself once nothing uses it.`);
  }
  const config = await ctx.config();
  const pendingRotation: PendingRotation = { oldId, newId, since: new Date(ctx.deps.now()).toISOString() };
  config.setProfile(ctx.profileName, { ...config.getProfile(ctx.profileName), pendingRotation });
  ctx.msg.success(
    `${visible(oldId)} keeps working beside ${visible(newId)}. Move every consumer to the new key, then run \`svc keys rotate --finish\`.`,
  );
  const rotation: Rotation = { key: created.document, previous: null, pending: pendingRotation };
  if (ctx.globals.json) printJson(ctx.io, rotation);
  return rotation;
}

/** --finish revokes the old key of the pending rotation, --cancel the new one; a key already gone counts as done. */
async function endOverlap(ctx: Context, how: 'finish' | 'cancel'): Promise<void> {
  const config = await ctx.config();
  const profile = config.getProfile(ctx.profileName);
  const pending = profile.pendingRotation;
  if (!pending) throw new UsageError(`No rotation is pending in profile '${ctx.profileName}' (svc keys rotate <id> --overlap starts one).`);
  const id = how === 'finish' ? pending.oldId : pending.newId;
  const client = await ctx.client();
  let result: unknown;
  try {
    result = await client.revokeKey(id);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    result = { id, revoked: false };
    ctx.msg.info(`${visible(id)} was already gone.`);
  }
  config.setProfile(ctx.profileName, { ...config.getProfile(ctx.profileName), pendingRotation: undefined });
  ctx.msg.success(
    how === 'finish'
      ? `Revoked the old key ${visible(id)}; the rotation to ${visible(pending.newId)} is complete.`
      : `Revoked the new key ${visible(id)}; ${visible(pending.oldId)} stays the key.`,
  );
  if (ctx.globals.json) printJson(ctx.io, result);
}

async function retireOldKey(
  client: ApiClient,
  id: string,
  created: NewKey,
  opts: RotateOptions,
): Promise<unknown> {
  try {
    return opts.disableOld
      ? ((await client.setEnabled(id, false)).document ?? (await client.getKey(id)).document)
      : await client.revokeKey(id);
  } catch (error) {
    const verb = opts.disableOld ? 'disable' : 'revoke';
    throw new CliError(
      `The new key${created.view.id === null ? '' : ` ${created.view.id}`} was created, but the old key ${id} could not be ${verb}d: ${(error as Error).message}. Retry with \`svc keys ${verb} ${id}\`.`,
    );
  }
}

async function offerToSave(ctx: Context, client: ApiClient, secret: string, opts: RotateOptions): Promise<void> {
  if (client.origin.keySource === 'env') {
    ctx.msg.warn('You are rotating the key in SVC_API_KEY: put the new secret there before the next command.');
    return;
  }
  let save = opts.save === true;
  if (!save && ctx.canPrompt) {
    const { answerOr } = await import('../../prompt.js');
    save = await answerOr((await ctx.prompts()).confirm(`This is the key profile '${ctx.profileName}' uses. Save the new key there?`, true), true);
  }
  if (!save) {
    ctx.msg.warn(`Profile '${ctx.profileName}' still holds the old key, which stops working now; run \`svc login\` with the new one (or pass --save).`);
    return;
  }
  const config = await ctx.config();
  config.setProfile(ctx.profileName, { ...config.getProfile(ctx.profileName), apiKey: secret });
  ctx.keyReplaced(secret);
  ctx.msg.success(`Saved the new key to profile '${ctx.profileName}'.`);
}
