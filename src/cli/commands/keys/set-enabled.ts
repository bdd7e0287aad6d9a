import { keyHint } from '../../../contract/key-format.js';
import type { KeyRecord } from '../../../contract/types.js';
import type { Context } from '../../context.js';
import { printJson } from '../../output.js';
import { checkKeyId, isNotFound, keyNotFound } from './common.js';

/** The shared body of `keys enable` and `keys disable`: one PATCH, 204 meaning "already". */
export async function setEnabled(ctx: Context, idArg: string, enabled: boolean): Promise<KeyRecord> {
  const id = checkKeyId(idArg);
  const client = await ctx.client();
  const state = enabled ? 'enabled' : 'disabled';
  let result;
  try {
    result = await client.setEnabled(id, enabled);
  } catch (error) {
    throw isNotFound(error) ? keyNotFound(id) : error;
  }
  // 204 has no body; --json still owes one document, so fetch the record.
  const key = result.key ?? (await client.getKey(id));
  if (ctx.globals.json) printJson(ctx.io, key);
  if (result.changed) ctx.msg.success(`${enabled ? 'Enabled' : 'Disabled'} ${id} (${key.name}).`);
  else ctx.msg.info(`${id} (${key.name}) is already ${state}.`);
  if (!enabled && ctx.credentialsUsed && key.hint === keyHint(ctx.credentialsUsed.apiKey)) {
    ctx.msg.warn('That is the key svc is using: requests with it now answer 401 until it is enabled again.');
  }
  return key;
}
