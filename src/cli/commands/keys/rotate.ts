import type { Command } from 'commander';
import { keyHint } from '../../../contract/key-format.js';
import type { ApiClient } from '../../../client/api.js';
import type { KeyRecord, RevokeResult } from '../../../contract/types.js';
import type { Context } from '../../context.js';
import { CliError } from '../../errors.js';
import { printJson } from '../../output.js';
import type { App } from '../../program.js';
import { createKey, SecretNotFoundError, showNewKey, type NewKey } from '../../new-key.js';
import { checkKeyId, isNotFound, keyNotFound } from './common.js';

export interface RotateOptions {
  disableOld?: boolean;
  save?: boolean;
}

export function register(keys: Command, app: App): void {
  keys
    .command('rotate')
    .description('replace a key: create one with the same name and expiry, then revoke (or disable) the old one')
    .argument('<id>', 'the key to replace')
    .option('--disable-old', 'disable the old key instead of revoking it, for a grace period')
    .option('--save', 'when the old key is the one in use, save the new one to the profile without asking')
    .addHelpText(
      'after',
      '\nThe new secret is printed once. The new key anchors to your active workspace, which may differ from the old key\'s.\n\nExamples:\n  $ svc keys rotate key_0123abcd\n  $ NEW=$(svc keys rotate key_0123abcd --disable-old)\n  $ svc keys rotate key_0123abcd --save   # the key svc itself uses',
    )
    .action(app.action(run));
}

export interface Rotation {
  /** The server's document for the new key, secret included, as it came. */
  key: unknown;
  /** What became of the old key; null when it was left as it was. */
  previous: RevokeResult | KeyRecord | null;
}

export async function run(ctx: Context, idArg: string, opts: RotateOptions): Promise<void> {
  await rotate(ctx, checkKeyId(idArg), opts);
}

/**
 * Shared with the interactive session. The old key is touched only once the
 * new secret has been shown: a rotation that loses the new secret must
 * leave the user the key they had.
 */
export async function rotate(ctx: Context, id: string, opts: RotateOptions): Promise<Rotation> {
  const client = await ctx.client();
  let old: KeyRecord;
  try {
    old = await client.getKey(id);
  } catch (error) {
    throw isNotFound(error) ? keyNotFound(id) : error;
  }
  const replacesKeyInUse = old.hint === keyHint(ctx.credentialsUsed!.apiKey);
  const created = await createKey(ctx, client, { name: old.name, expiresAt: replacementExpiry(old, Date.now()) });

  let previous: RevokeResult | KeyRecord;
  try {
    showNewKey(ctx, created, false);
    const workspaceId = created.view.workspaceId;
    if (workspaceId !== null && workspaceId !== old.workspaceId) {
      ctx.msg.warn(
        `The new key anchors to workspace ${workspaceId} (your active one), not ${old.workspaceId}: its rate limit and plan follow ${workspaceId}.`,
      );
    }
    if (replacesKeyInUse) await offerToSave(ctx, created.secret!, opts);
    previous = await retireOldKey(client, id, created, opts);
  } catch (error) {
    // --json owes its one document, the new secret in it, whatever failed after the create.
    if (ctx.globals.json) printJson(ctx.io, { key: created.document, previous: null } satisfies Rotation);
    if (error instanceof SecretNotFoundError) throw new CliError(`${error.message}\nThe old key ${id} was left as it was.`);
    throw error;
  }
  ctx.msg.success(`${opts.disableOld ? 'Disabled' : 'Revoked'} the old key ${id}; ${created.view.id ?? 'the new key'} replaces it.`);
  const rotation: Rotation = { key: created.document, previous };
  if (ctx.globals.json) printJson(ctx.io, rotation);
  return rotation;
}

async function retireOldKey(
  client: ApiClient,
  id: string,
  created: NewKey,
  opts: RotateOptions,
): Promise<RevokeResult | KeyRecord> {
  try {
    return opts.disableOld
      ? ((await client.setEnabled(id, false)).key ?? (await client.getKey(id)))
      : await client.revokeKey(id);
  } catch (error) {
    const verb = opts.disableOld ? 'disable' : 'revoke';
    throw new CliError(
      `The new key${created.view.id === null ? '' : ` ${created.view.id}`} was created, but the old key ${id} could not be ${verb}d: ${(error as Error).message}. Retry with \`svc keys ${verb} ${id}\`.`,
    );
  }
}

/** The old key's expiry carries over; an already expired key gets its original lifetime again. */
export function replacementExpiry(old: KeyRecord, nowMs: number): string | null {
  if (!old.expiresAt) return null;
  const expires = Date.parse(old.expiresAt);
  if (expires > nowMs) return old.expiresAt;
  return new Date(nowMs + (expires - Date.parse(old.createdAt))).toISOString();
}

async function offerToSave(ctx: Context, secret: string, opts: RotateOptions): Promise<void> {
  const creds = ctx.credentialsUsed!;
  if (creds.source === 'env') {
    ctx.msg.warn('You are rotating the key in SVC_API_KEY: put the new secret there before the next command.');
    return;
  }
  let save = opts.save === true;
  if (!save && ctx.canPrompt) {
    save = await (await ctx.prompts()).confirm(`This is the key profile '${ctx.profileName}' uses. Save the new key there?`, true);
  }
  if (!save) {
    ctx.msg.warn(`Profile '${ctx.profileName}' still holds the old key, which stops working now; run \`svc login\` with the new one (or pass --save).`);
    return;
  }
  const config = await ctx.config();
  config.setProfile(ctx.profileName, { ...config.getProfile(ctx.profileName), apiKey: secret });
  ctx.credentialsUsed = { apiKey: secret, source: 'profile' };
  ctx.msg.success(`Saved the new key to profile '${ctx.profileName}'.`);
}
