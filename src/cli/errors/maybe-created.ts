/**
 * The words of a create whose outcome is unknown (docs/contract.md §C4,
 * operations/maybe-created.ts): what the look for its key found, what
 * became of each key svc could tell for its own, and what to run for the rest.
 */
import { clip, shellWord } from '../text/text.js';
import { revokeCommand } from './errors.js';

/**
 * What became of a key svc made and nobody has the secret of: revoked; a
 * revoke that failed; one a second signal stopped (it may or may not have
 * landed); or left, because the answer svc printed may hold its secret.
 */
export type OrphanFate = { state: 'revoked' } | { state: 'failed'; why: string } | { state: 'stopped' } | { state: 'left' };

/** The look for the create's key (operations/look-for-orphans.ts), as much of it as the words tell. */
export interface Look {
  sighting: {
    orphans: readonly { id: string; createdAt: number }[];
    candidates: readonly { id: string; createdAt: number | null }[];
    unnamed: number;
    incomplete: string | null;
    collided: boolean;
  } | null;
  looks: number;
  /** Why svc stopped looking (LookEnd). */
  end: string;
  failure: string | null;
  windowMs: number;
}

/** How long after the failure, and after the request began, a create may still land: what a look that found nothing is worth. */
export interface SettleTimes {
  settleWindowMs: number;
  gatewayMs: number;
}

/** What became of the keys, once the person was told about them. */
export function orphansOutcome(lookup: Look, fates: ReadonlyMap<string, OrphanFate>): string[] {
  const keys = lookup.sighting?.orphans ?? [];
  const fate = (id: string) => (fates.get(id)?.state === 'revoked' ? 'is revoked now' : `was left as it is (${revokeCommand(id)} revokes it)`);
  if (keys.length === 1) return [`The create failed: ${clip(keys[0]!.id, 200)}, the key it made, ${fate(keys[0]!.id)}.`];
  return ['The create failed; the keys it made:', ...keys.map((key) => `  ${clip(key.id, 200)} ${fate(key.id)}`)];
}

/** What the look found, and what to run for each key that may be the create's; `marked`: svc sent a mark nobody else sends. */
export function maybeCreatedFindings(name: string, lookup: Look, marked: boolean, fates: ReadonlyMap<string, OrphanFate>, times: SettleTimes): string[] {
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
  if (orphans.length === 0) lines.push(howLong(lookup, times));
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
function howLong({ looks, end, failure, windowMs }: Look, { settleWindowMs, gatewayMs }: SettleTimes): string {
  const times = looks === 1 ? 'once' : `${looks} times`;
  const failed = failure === null ? '' : ` The last look failed (${clip(failure, 200)}); what is said above is from the one before.`;
  switch (end) {
    case 'settled':
      return `svc looked ${times}, until ${Math.round(windowMs / 1000)} s after the failure, when the create must have settled (at least ${settleWindowMs / 1000} s after it, and ${gatewayMs / 1000} s after the request began, as long as a gateway in front gives a slow server).${failed}`;
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
