import { CliError, ExitCode } from '../errors.js';
import { clip } from '../render/text.js';

/** Where a secret went: the file's absolute path, or the command as given. */
export type Delivered = { file: string } | { command: string };

/** One destination refused the secret: why, in words that finish "The secret could not be delivered: …". */
export class DeliveryStepError extends Error {
  constructor(
    readonly reason: string,
    /** Ctrl-C (or SIGTERM) stopped it. */
    readonly interrupted = false,
  ) {
    super(reason);
    this.name = 'DeliveryStepError';
  }
}

/** "the file /x/.env and `gh secret set SVC_API_KEY`" */
export function describeDelivered(delivered: readonly Delivered[]): string {
  return delivered.map((to) => ('file' in to ? `the file ${clip(to.file, 200)}` : `\`${clip(to.command, 200)}\``)).join(' and ');
}

/**
 * Delivery failed, so the secret was printed instead (the caller did that
 * before throwing this): delivery never loses a secret. Exit 1, or 130 when
 * Ctrl-C stopped it.
 */
export class DeliveryFailedError extends CliError {
  constructor(
    readonly delivered: readonly Delivered[],
    readonly reason: string,
    readonly interrupted: boolean,
  ) {
    super(
      [
        `The new secret could not be delivered: ${reason}. svc printed it instead (on stdout): store it now.`,
        ...(delivered.length > 0 ? [`It did reach ${describeDelivered(delivered)} before that.`] : []),
      ],
      interrupted ? ExitCode.interrupted : ExitCode.failure,
    );
    this.name = 'DeliveryFailedError';
  }
}
