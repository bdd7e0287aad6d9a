/**
 * A create whose outcome is unknown (docs/contract.md §C4), as data: what
 * the look for its key found, what became of each key svc could tell for
 * its own, and the --json fields that say so; its lines are worded in
 * errors/maybe-created.ts.
 */
import { CliError, ExitCode, signalExitCode } from '../errors/errors.js';
import { maybeCreatedFindings, orphansOutcome, type OrphanFate } from '../errors/maybe-created.js';
import { GATEWAY_MS, SETTLE_WINDOW_MS, type OrphanLookup } from './look-for-orphans.js';
import type { ListedKey } from '../domain/own-key.js';

/** The --json failure document's fields for such a create (docs/cli-error.schema.json). */
export interface OrphanFields {
  orphans: { id: string; name: string; createdAt: string; revoked: boolean }[];
  candidates: { id: string; name: string; createdAt: string | null }[];
}

/**
 * The request may have made a key whose secret nobody saw. Carries the
 * look's findings, each found key's fate, whether svc sent a mark of its
 * own, and the answer's raw text when it could not be read (it may hold
 * the secret); the report puts the cause first and prints that text on stdout.
 */
export class MaybeCreatedError extends CliError {
  constructor(
    readonly cause: unknown,
    readonly keyName: string,
    readonly lookup: OrphanLookup,
    /** svc sent a mark nobody else sends (client/marks.ts): a key without it is no proof of anything. */
    readonly marked: boolean,
    readonly answer: string | null,
    readonly fates: ReadonlyMap<string, OrphanFate>,
    /** The signal that came while the request was out or svc looked: the command ends with its code (SIGINT 130, SIGTERM 143). */
    readonly interrupted: NodeJS.Signals | null = null,
    /**
     * The person was shown the cause, what was found and the answer (on a
     * terminal, before being asked whether to revoke): what is left to say
     * is what became of each key.
     */
    readonly told = false,
  ) {
    const lines = told ? orphansOutcome(lookup, fates) : maybeCreatedFindings(keyName, lookup, marked, fates, { settleWindowMs: SETTLE_WINDOW_MS, gatewayMs: GATEWAY_MS });
    super(lines, interrupted === null ? ExitCode.failure : signalExitCode(interrupted), undefined, interrupted);
    this.name = 'MaybeCreatedError';
  }

  /** svc's own keys that were left for the person, the answer svc printed holding their secret maybe. */
  get left(): ListedKey[] {
    return (this.lookup.sighting?.orphans ?? []).filter((key) => this.fates.get(key.id)?.state === 'left');
  }

  /** The same failure, ended by `signal` (a signal its caller held while svc looked), unless one ended it already. */
  stoppedBy(signal: NodeJS.Signals): MaybeCreatedError {
    if (this.interrupted !== null) return this;
    return new MaybeCreatedError(this.cause, this.keyName, this.lookup, this.marked, this.answer, this.fates, signal, this.told);
  }

  /** The same failure once it was explained and its keys' fates decided. */
  settled(fates: ReadonlyMap<string, OrphanFate>): MaybeCreatedError {
    return new MaybeCreatedError(this.cause, this.keyName, this.lookup, this.marked, null, new Map([...this.fates, ...fates]), this.interrupted, true);
  }

  fields(): OrphanFields {
    const sighting = this.lookup.sighting;
    return {
      orphans: (sighting?.orphans ?? []).map((key) => ({
        id: key.id,
        name: this.keyName,
        createdAt: new Date(key.createdAt).toISOString(),
        revoked: this.fates.get(key.id)?.state === 'revoked',
      })),
      candidates: (sighting?.candidates ?? []).map((key) => ({ id: key.id, name: this.keyName, createdAt: key.createdAt === null ? null : new Date(key.createdAt).toISOString() })),
    };
  }
}
