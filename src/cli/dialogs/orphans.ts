import { InterruptedError, PromptCancelledError } from '../errors.js';
import type { MaybeCreatedError } from '../operations/create.js';
import { revokeKeys } from '../operations/keys.js';
import { describeFailure } from '../report.js';
import type { KeySession } from '../session.js';

/**
 * After a create whose answer was lost, on a terminal: the keys it made,
 * whose secrets nobody saw, are revoked if the person agrees. Everything
 * the failure has to say comes first (an unreadable answer on stdout, the
 * cause, the keys found, each with the command that revokes it), then the
 * question (No by default: a key of the same name made a moment earlier by
 * someone who did see its secret looks the same). Returns the failure to
 * report, which then says only what became of each key.
 */
export async function settleOrphans(session: KeySession, error: MaybeCreatedError): Promise<MaybeCreatedError> {
  if (!session.canPrompt || error.lookup.state !== 'found') return error;
  const { keys } = error.lookup;
  // The answer may hold the secret after all: it is shown before anyone decides to revoke.
  if (error.answer !== null) session.render.lines(error.answer.replace(/\n$/, '').split('\n'));
  session.render.warn(...describeFailure(error, { verbose: false }).lines);
  const what = keys.length === 1 ? 'it' : `these ${keys.length} keys`;
  let agreed: boolean;
  try {
    agreed = await (await session.prompts()).confirm(`Revoke ${what} now? Without the secret nobody can use ${keys.length === 1 ? 'it' : 'them'}.`, false);
  } catch (cancelled) {
    if (cancelled instanceof PromptCancelledError) throw new InterruptedError(error.settled(new Set()).lines, cancelled.signal);
    throw cancelled;
  }
  if (!agreed) return error.settled(new Set());
  const { outcomes } = await revokeKeys(session.client, keys.map((k) => k.id), true);
  for (const outcome of outcomes) {
    if (outcome.state === 'failed') session.render.warn(`Could not revoke ${outcome.id}: ${(outcome.error as Error).message}`);
  }
  return error.settled(new Set(outcomes.filter((o) => o.state !== 'failed').map((o) => o.id)));
}
