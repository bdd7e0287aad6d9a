/**
 * What the key commands and the interactive manager share: checking an id,
 * telling a missing key, whether a key is the one in use, a key on one line
 * in a list, switching a key on or off, and a replacement's expiry.
 */
import { ApiError } from '../client/errors.js';
import { keyStatus, readKey, type KeyView } from '../client/key-view.js';
import type { Context } from './context.js';
import { CliError, ExitCode, UsageError } from './errors.js';
import { printJson, visible } from './output.js';

/** A 404 from the service; an HTML 404 page from something else is no answer about the key. */
export function isNotFound(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404 && error.foreignBody === null;
}

export function keyNotFound(ids: string): CliError {
  return new CliError(
    `No key with id ${visible(ids)}: it never existed, belongs to another user, or was already revoked.`,
    ExitCode.notFound,
  );
}

/**
 * Ids are opaque (docs/contract.md §C6): any server may shape them its own way. Only
 * what no URL can carry as one path segment is refused: an empty id would
 * address the whole collection, and URL parsers resolve `.` and `..` (even
 * percent-encoded) to another path.
 */
export function checkKeyId(id: string): string {
  if (id.trim() === '' || id === '.' || id === '..') {
    throw new UsageError(`'${visible(id)}' cannot name a key: no URL can carry it as a path segment (see \`svc keys list\`).`);
  }
  return id;
}

/** Whether this is the key svc is using; unknowable when the server shows no hints. */
export function isKeyInUse(key: KeyView, inUse: string | undefined): boolean | null {
  if (inUse === undefined || key.hint === null) return null;
  return key.hint === inUse;
}

/** One line for a key in pick-lists and confirmations. */
export function describeKey(key: KeyView, inUse: string | undefined, nowMs: number): string {
  const parts = [key.id, key.name, key.hint, keyStatus(key, nowMs)].filter((p): p is string => p !== null).map(visible);
  return `${parts.join('  ')}${isKeyInUse(key, inUse) ? '  (the key in use)' : ''}`;
}

/** The shared body of `keys enable` and `keys disable`: one PATCH, 204 meaning "already". */
export async function setEnabled(ctx: Context, idArg: string, enabled: boolean): Promise<void> {
  const id = checkKeyId(idArg);
  const client = await ctx.client();
  const state = enabled ? 'enabled' : 'disabled';
  let result;
  try {
    result = await client.setEnabled(id, enabled);
  } catch (error) {
    throw isNotFound(error) ? keyNotFound(id) : error;
  }
  // 204 has no body; --json still owes one document, so the record is read (from the list where need be).
  const document = result.document ?? (await client.getKey(id)).document;
  const key = readKey(document);
  if (ctx.globals.json) printJson(ctx.io, document);
  const label = `${visible(id)}${key.name === null ? '' : ` (${visible(key.name)})`}`;
  if (result.changed) ctx.msg.success(`${enabled ? 'Enabled' : 'Disabled'} ${label}.`);
  else ctx.msg.info(`${label} is already ${state}.`);
  if (enabled) return;
  const inUse = isKeyInUse(key, client.keyHint);
  if (inUse) ctx.msg.warn('That is the key svc is using: requests with it now answer 401 until it is enabled again.');
  else if (inUse === null) {
    ctx.msg.info('(This server shows no key hints, so svc cannot tell whether that was the key it is using.)');
  }
}

/**
 * The old key's expiry carries over; an already expired key gets its
 * original lifetime again from `nowMs` (the server's clock). `unknown` when
 * the record does not say enough to tell.
 */
export function replacementExpiry(old: KeyView, nowMs: number): { expiresAt: string | null; unknown: boolean } {
  if (!old.expiresKnown) return { expiresAt: null, unknown: true };
  if (old.expiresAt === null) return { expiresAt: null, unknown: false };
  if (old.expiresAt > nowMs) return { expiresAt: new Date(old.expiresAt).toISOString(), unknown: false };
  if (old.createdAt === null || old.createdAt >= old.expiresAt) return { expiresAt: null, unknown: true };
  return { expiresAt: new Date(nowMs + (old.expiresAt - old.createdAt)).toISOString(), unknown: false };
}
