/**
 * A create whose outcome is unknown (docs/contract.md §C4), as data: what
 * the look for its key found, what became of each key svc could tell for
 * its own, and the lines and --json fields that say so.
 */
import { CliError, ExitCode, signalExitCode, revokeCommand } from '../errors/errors.js';
import { clip, shellWord } from '../text/text.js';
import { GATEWAY_MS, SETTLE_WINDOW_MS, type OrphanLookup } from './look-for-orphans.js';
import type { ListedKey } from '../domain/own-key.js';

/**
 * What became of a key svc made and nobody has the secret of: revoked; a
 * revoke that failed; one a second signal stopped (it may or may not have
 * landed); or left, because the answer svc printed may hold its secret.
 */
export type OrphanFate = { state: 'revoked' } | { state: 'failed'; why: string } | { state: 'stopped' } | { state: 'left' };

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
    super(told ? outcome(lookup, fates) : findings(keyName, lookup, marked, fates), interrupted === null ? ExitCode.failure : signalExitCode(interrupted), undefined, interrupted);
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

/** What became of the keys, once the person was told about them. */
function outcome(lookup: OrphanLookup, fates: ReadonlyMap<string, OrphanFate>): string[] {
  const keys = lookup.sighting?.orphans ?? [];
  const fate = (id: string) => (fates.get(id)?.state === 'revoked' ? 'is revoked now' : `was left as it is (${revokeCommand(id)} revokes it)`);
  if (keys.length === 1) return [`The create failed: ${clip(keys[0]!.id, 200)}, the key it made, ${fate(keys[0]!.id)}.`];
  return ['The create failed; the keys it made:', ...keys.map((key) => `  ${clip(key.id, 200)} ${fate(key.id)}`)];
}

function findings(name: string, lookup: OrphanLookup, marked: boolean, fates: ReadonlyMap<string, OrphanFate>): string[] {
  const quoted = `'${clip(name, 200)}'`;
  const { sighting } = lookup;
  if (sighting === null) {
    const why = lookup.end === 'signal' ? 'stopped before it could' : `could not look for it (${clip(lookup.failure ?? 'no answer', 200)})`;
    return [`svc ${why}: run \`svc keys list --name ${shellWord(name)}\` before you try again.`];
  }
  const lines: string[] = [];
  const { orphans } = sighting;
  const dated = sighting.candidates.filter((key) => key.createdAt !== null);
  const undated = sighting.candidates.filter((key) => key.createdAt === null);
  if (orphans.length > 0) {
    const one = orphans.length === 1;
    const seen = [...fates.values()].some((fate) => fate.state === 'left')
      ? `its secret may be in the answer printed above`
      : `no one has seen ${one ? 'its secret' : 'their secrets'}`;
    lines.push(`It did take effect: ${one ? 'a key' : `${orphans.length} keys`} named ${quoted} appeared since the request began, made by this create, and ${seen}.`);
    lines.push(...orphans.map((key) => `  ${clip(key.id, 200)}  created ${new Date(key.createdAt).toISOString()}  ${fateText(key.id, fates.get(key.id))}`));
  } else if (dated.length > 0) {
    const one = dated.length === 1;
    const why = sighting.collided
      ? 'they carry the expiry svc drew for this create, which one create cannot have made twice: another job drew the same'
      : marked
        ? `${one ? 'it does not list' : 'none of them lists'} the exact expiry svc sent, which this server may round`
        : 'svc sent nothing only it sends: an expiry from --expires-in, or a name svc draws, would tell';
    lines.push(
      `${one ? 'A key' : `${dated.length} keys`} named ${quoted} ${one ? 'was' : 'were'} made since the request began, and svc cannot tell whether ${one ? 'it is' : 'one of them is'} the one this create made: another client may have made ${one ? 'it' : 'them'} with the same name in the same moment (${why}).`,
      'svc revoked none; revoke one only if no other client made it:',
      ...dated.map((key) => `  ${clip(key.id, 200)}  created ${new Date(key.createdAt!).toISOString()}  ${revokeCommand(key.id)}`),
      `If the create's key is not among them, the server may still be creating it: check \`svc keys list --name ${shellWord(name)}\` in a minute before you try again.`,
    );
  } else {
    // Not finding it proves little: a server may commit a create after answering, or list it later.
    lines.push(
      `No key named ${quoted} made since the request began is in the list yet. It may not have been made, or the server may still be creating it:`,
      `check \`svc keys list --name ${shellWord(name)}\` in a minute before you try again.`,
    );
  }
  if (undated.length > 0) {
    const one = undated.length === 1;
    lines.push(`${one ? 'A key' : `${undated.length} keys`} named ${quoted} ${one ? 'shows' : 'show'} no creation time svc can read; ${one ? 'it' : 'any of them'} may be the one:`);
    lines.push(...undated.map((key) => `  ${clip(key.id, 200)}  ${revokeCommand(key.id)}`));
  }
  if (sighting.unnamed > 0) lines.push(`${sighting.unnamed === 1 ? 'A key shows' : `${sighting.unnamed} keys show`} no name svc can read, so svc could not tell whether one of them is it.`);
  if (sighting.incomplete !== null) lines.push(`The list may lack keys: ${clip(sighting.incomplete, 200)}.`);
  if (orphans.length === 0) lines.push(howLong(lookup));
  return lines;
}

function fateText(id: string, fate: OrphanFate | undefined): string {
  switch (fate?.state) {
    case 'revoked':
      return 'revoked now: nobody could use it';
    case 'failed':
      return `could not be revoked (${clip(fate.why, 200)}): ${revokeCommand(id)}`;
    case 'stopped':
      return `stopped during its revoke, which may or may not have landed: ${revokeCommand(id)}`;
    default:
      return `revoke it: ${revokeCommand(id)}`;
  }
}

/** How long svc looked, when it did not find its key: what "not in the list" is worth. */
function howLong({ looks, end, failure, windowMs }: OrphanLookup): string {
  const times = looks === 1 ? 'once' : `${looks} times`;
  const failed = failure === null ? '' : ` The last look failed (${clip(failure, 200)}); what is said above is from the one before.`;
  switch (end) {
    case 'settled':
      return `svc looked ${times}, until ${Math.round(windowMs / 1000)} s after the failure, when the create must have settled (at least ${SETTLE_WINDOW_MS / 1000} s after it, and ${GATEWAY_MS / 1000} s after the request began, as long as a gateway in front gives a slow server).${failed}`;
    case 'no-wait':
      return `svc looked once: --no-wait lets it wait for no second look.${failed}`;
    case 'budget':
      return `svc looked ${times}, until --max-wait ran out, before the create must have settled.${failed}`;
    case 'signal':
      return `svc looked ${times}, then stopped as asked, before the create must have settled.${failed}`;
    default:
      return `svc looked ${times}, then stopped: ${clip(failure ?? 'the list could not be read', 200)}.`;
  }
}
