import { CliError, ExitCode, signalExitCode } from './errors.js';
import { revokeCommand } from '../errors/errors.js';
import { clip } from '../text/text.js';

/** Where a secret went: the file's absolute path, or the command as given. */
export type Delivered = { file: string } | { command: string };

/** One destination refused the secret: why, in words that finish "The secret could not be delivered: …". */
export class DeliveryStepError extends Error {
  constructor(
    readonly reason: string,
    /** The signal (Ctrl-C, SIGTERM) that stopped it. */
    readonly signal: NodeJS.Signals | null = null,
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
 * What became of a secret that could not be delivered (docs/contract.md §C9):
 * printed, where a person sees it; or kept from the log and its key revoked,
 * where nobody does (--on-delivery-failure revoke) — or not, when the revoke
 * failed too.
 */
export type Fallback = { printed: true } | { revoked: string } | { notRevoked: string | null; why: string };

/**
 * Delivery failed, and the secret was printed instead or its key revoked
 * (the caller did that before throwing this). Exit 1, or 128 + the signal's
 * number when one stopped it.
 */
export class DeliveryFailedError extends CliError {
  constructor(
    readonly delivered: readonly Delivered[],
    readonly reason: string,
    signal: NodeJS.Signals | null,
    readonly fallback: Fallback = { printed: true },
  ) {
    super(
      [
        ...fallbackLines(reason, fallback),
        ...(delivered.length > 0 ? [`It did reach ${describeDelivered(delivered)} before that${'printed' in fallback ? '' : ', where it no longer works'}.`] : []),
      ],
      signal === null ? ExitCode.failure : signalExitCode(signal),
      undefined,
      signal,
    );
    this.name = 'DeliveryFailedError';
  }

  /** The same failure, with what svc did about the secret instead (and the signal that came meanwhile, if none had). */
  instead(fallback: Fallback, signal: NodeJS.Signals | null = null): DeliveryFailedError {
    return new DeliveryFailedError(this.delivered, this.reason, this.signal ?? signal, fallback);
  }
}

function fallbackLines(reason: string, fallback: Fallback): string[] {
  const failed = `The new secret could not be delivered: ${reason}.`;
  if ('printed' in fallback) return [`${failed} svc printed it instead (on stdout): store it now.`];
  if ('revoked' in fallback) {
    return [`${failed} It was not printed (--on-delivery-failure revoke): the new key ${clip(fallback.revoked, 200)}, whose secret nobody saw, was revoked.`];
  }
  return [
    `${failed} It was not printed (--on-delivery-failure revoke), and the new key, whose secret nobody saw, could not be revoked: ${clip(fallback.why, 200)}.`,
    fallback.notRevoked === null ? 'Find it with `svc keys list` and revoke it.' : `Revoke it: ${revokeCommand(fallback.notRevoked)}`,
  ];
}
