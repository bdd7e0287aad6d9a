import { InterruptedError, PromptCancelledError } from '../errors.js';
import type { MaybeCreatedError } from '../operations/create.js';
import { revokeKeys } from '../operations/keys.js';
import { describeFailure } from '../report.js';
import type { KeySession } from '../session.js';

/**
 * After a create whose answer was lost, on a terminal: the keys it made,
 * whose secrets nobody saw, are revoked if the person agrees. Why it is
 * asked comes first, then the question (No by default: a key of the same
 * name made a moment earlier by someone who did see its secret looks the
 * same). Returns the failure to report, with what was revoked.
 */
export async function settleOrphans(session: KeySession, error: MaybeCreatedError): Promise<MaybeCreatedError> {
  if (!session.canPrompt || error.lookup.state !== 'found') return error;
  const { keys } = error.lookup;
  const cause = describeFailure(error.cause, { verbose: false }).lines.filter((line) => !line.startsWith('Run `svc keys list`'));
  session.render.warn(...cause);
  for (const key of keys) {
    session.render.warn(`Made by this request, its secret never shown: ${key.id}, created ${new Date(key.createdAt).toISOString()}`);
  }
  const what = keys.length === 1 ? 'it' : `these ${keys.length} keys`;
  let agreed: boolean;
  try {
    agreed = await (await session.prompts()).confirm(`Revoke ${what} now? Without the secret nobody can use ${keys.length === 1 ? 'it' : 'them'}.`, false);
  } catch (cancelled) {
    if (cancelled instanceof PromptCancelledError) throw new InterruptedError(error.lines);
    throw cancelled;
  }
  if (!agreed) return error;
  const { outcomes } = await revokeKeys(session.client, keys.map((k) => k.id), true);
  for (const outcome of outcomes) {
    if (outcome.state === 'failed') session.render.warn(`Could not revoke ${outcome.id}: ${(outcome.error as Error).message}`);
  }
  return error.withRevoked(new Set(outcomes.filter((o) => o.state !== 'failed').map((o) => o.id)));
}
