/** How a create fails where svc must say what may have been made and how to find or revoke it. */
import { clip, shellWord } from '../text/text.js';
import { CliError, ExitCode, InterruptedError, revokeCommand } from './errors.js';

/** The server answered, but svc cannot tell which part of the answer is the secret (docs/contract.md §C6). */
export class SecretNotFoundError extends CliError {
  constructor(id: string | null) {
    super(
      [
        "The key was created, but svc could not find its secret in the server's answer, printed on stdout as it came",
        "(svc looks for a 'secret' field, or one value of the form sk_ + 64 letters and digits).",
        `If the secret is there, store it now; if not, revoke the key (${revokeCommand(id)}) and tell the service's operators.`,
      ],
      ExitCode.failure,
    );
    this.name = 'SecretNotFoundError';
  }
}

/** A second signal while the create of a key named `name` was out: svc stops at once, and nobody has seen the secret of what it may have made. */
export function stoppedDuringCreate(name: string, signal: NodeJS.Signals): InterruptedError {
  return new InterruptedError(
    [
      `Stopped while the create was out: a key named '${clip(name, 200)}' may have been made, and nobody has seen its secret.`,
      `Find it with \`svc keys list --name ${shellWord(name)}\` and revoke it.`,
    ],
    signal,
  );
}
