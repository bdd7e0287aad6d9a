import { InterruptedError, OutputError, SecretNotWrittenError, UsageError } from '../errors/errors.js';
import type { IO } from '../terminal/io.js';
import { SecretNotFoundError } from '../errors/create.js';
import type { CreateWatch, NewKey } from '../operations/create.js';
import type { Renderer } from '../terminal/renderer.js';
import { tone } from '../text/text.js';
import type { Session } from '../session/session.js';
import { newKeyDocument } from './documents.js';
import { describeNewKey, onlyTimeWarning } from './keys.js';

/**
 * Shows a new key: the one and only time its secret can be seen. The secret
 * (or, when svc cannot tell which part it is, the whole answer) reaches
 * stdout before anything else is said; with --quiet nothing else is. With --json a caller that prints a
 * larger document of its own passes `printDocument: false`. Resolves only
 * once stdout has taken the secret: a rotation retires the old key after
 * this, so a secret that could not be written (a full disk) throws
 * SecretNotWrittenError instead.
 */
export async function showNewKey(session: Session, key: NewKey, printDocument = true): Promise<void> {
  const { render, io, options } = session;
  if (options.json) {
    if (printDocument) render.json(newKeyDocument(key, { delivered: null }));
  } else if (key.secret === null) {
    render.json(key.document);
  } else if (!io.stdoutIsTTY || options.quiet) {
    render.lines([key.secret]);
  } else {
    render.success(`Created ${describeNewKey(key)}.`);
    render.lines(['', ['  ', tone(key.secret, 'bold')], '']);
  }
  await secretWritten(render, io, key.view.id);
  // --quiet asks for the data alone: the one-time warning is the one warning it silences (docs/contract.md §C3).
  // Said once the secret is known to have landed: a secret that did not is lost, and that is what is said instead.
  if (key.secret !== null && !options.quiet) render.warn(onlyTimeWarning(key.view.id));
  if (key.secret === null) throw new SecretNotFoundError(key.view.id);
  if (key.interrupted) throw new InterruptedError(['Stopped after the new key was made (shown above); nothing else was changed.'], key.interrupted);
}

/**
 * Refuses, before any key is made, to print a new secret to /dev/null (or
 * a closed stdout, which Node turns into /dev/null): it would be lost.
 */
export function refuseDiscardedStdout(io: IO, instead = 'Send stdout somewhere, or give --to-file <path> or --to-command <command>.'): void {
  if (io.stdoutDiscarded) throw new UsageError([`${DISCARDED}. Nothing was done.`, instead]);
}

const DISCARDED = 'Stdout is /dev/null (or was closed), where the new secret would be lost';

/** Resolves once stdout took a new secret; a secret it did not take is lost, and the error names the key to revoke. */
export async function secretWritten(render: Renderer, io: IO, id: string | null, before: readonly string[] = []): Promise<void> {
  if (io.stdoutDiscarded) throw new SecretNotWrittenError(id, new Error('stdout is /dev/null, or was closed'), before);
  try {
    await render.written();
  } catch (error) {
    if (error instanceof OutputError) throw new SecretNotWrittenError(id, error.writeError, before);
    throw error;
  }
}

/** What a create watches while its request is out: Ctrl-C waits on for the answer, and says so. */
export function createWatch(session: Session): CreateWatch {
  return {
    now: session.deps.now,
    onSignal: session.deps.onSignal,
    interrupted: () =>
      session.render.warn('Interrupted while the create was out: waiting for its answer, which holds the only copy of the secret (Ctrl-C again to stop at once).'),
  };
}
