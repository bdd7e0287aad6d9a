import { PromptCancelledError } from '../errors/errors.js';
import type { Session } from '../session/session.js';

/**
 * The question before a change that cannot be undone, with one outcome
 * for every way of declining it (docs/contract.md §C7): No, Esc and Ctrl-C
 * alike stop the command with "Cancelled; nothing was revoked." and exit
 * 130, or take the manager back to its menu. Declining is the person
 * stopping the command, as Ctrl-C is, not the command failing; Ctrl-C's
 * stop still ends svc by SIGINT, so that a loop around svc stops too.
 */
export async function confirmChange(session: Session, question: string, nothingDone: string): Promise<void> {
  let agreed = false;
  let withdrawn: PromptCancelledError | null = null;
  try {
    agreed = await (await session.prompts()).confirm(question);
  } catch (error) {
    if (!(error instanceof PromptCancelledError)) throw error;
    withdrawn = error;
  }
  if (!agreed) throw new PromptCancelledError([`Cancelled; ${nothingDone}.`], withdrawn?.signal ?? null);
}
