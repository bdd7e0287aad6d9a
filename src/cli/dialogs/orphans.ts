import { InterruptedError, PromptCancelledError } from '../errors/errors.js';
import type { OrphanFate } from '../errors/maybe-created.js';
import type { MaybeCreatedError } from '../operations/maybe-created.js';
import { changeKeys } from '../operations/change-keys.js';
import { keysContext } from '../operations/context.js';
import { describeFailure } from '../views/failure.js';
import type { KeySession } from '../session/session.js';

/**
 * After a create whose 2xx answer svc could not read, on a terminal: the
 * keys svc can tell for its own are left for the person, since that
 * answer, printed on stdout, may hold their secret; they are revoked if the
 * person agrees. Only those: a key svc cannot tell from another client's
 * (a candidate) is never offered. Everything the failure has to say comes
 * first (the answer, the cause, the keys found, each with the command that
 * revokes it), then the question (No by default: the secret may be in the
 * answer above). Returns the failure to report, which then says only what
 * became of each key.
 */
export async function settleOrphans(session: KeySession, error: MaybeCreatedError): Promise<MaybeCreatedError> {
  const keys = error.left;
  if (!session.canPrompt || keys.length === 0) return error;
  if (error.answer !== null) session.render.lines(error.answer.replace(/\n$/, '').split('\n'));
  session.render.warn(...describeFailure(error, { verbose: false }).lines);
  const what = keys.length === 1 ? 'it' : `these ${keys.length} keys`;
  let agreed: boolean;
  try {
    agreed = await (await session.prompts()).confirm(`Revoke ${what} now? Unless the answer above holds the secret, nobody can use ${keys.length === 1 ? 'it' : 'them'}.`, false);
  } catch (cancelled) {
    if (cancelled instanceof PromptCancelledError) throw new InterruptedError(error.settled(new Map()).lines, cancelled.signal);
    throw cancelled;
  }
  if (!agreed) return error.settled(new Map());
  const { results, stoppedBy } = await changeKeys(keysContext(session), { change: 'revoke', targets: { keys: keys.map((k) => ({ id: k.id, name: null })) }, keepGoing: true, goneIsDone: true });
  const fates = new Map<string, OrphanFate>();
  for (const result of results) {
    if (result.state === 'failed') session.render.warn(`Could not revoke ${result.id}: ${(result.error as Error).message}`);
    else if (result.state === 'done' || result.state === 'gone') fates.set(result.id, { state: 'revoked' });
  }
  // A stop between two keys leaves the rest as they are, each said with the command that revokes it.
  if (stoppedBy) throw new InterruptedError(error.settled(fates).lines, stoppedBy);
  return error.settled(fates);
}
