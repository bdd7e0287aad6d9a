import type { Context } from '../../context.js';
import { printJson, visible } from '../../output.js';
import { checkKeyId, isKeyInUse, isNotFound, keyNotFound } from './common.js';
import { readKey } from '../../../client/key-view.js';

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
