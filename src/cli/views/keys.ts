/**
 * How keys look to a person and to a script: the table's columns, one
 * key's fields, a key on one line, a new key, and the key-health warnings.
 * Views build what the renderer draws; the renderer escapes every string.
 */
import { keyStatus, type KeyView } from '../../client/key-view.js';
import type { Column, Field } from '../terminal/renderer.js';
import { clip, shellWord, tone, type Line, type Segment } from '../text/text.js';
import { isKeyInUse } from '../domain/keys.js';
import { revokeCommand } from '../errors/errors.js';
import type { Unjudged } from '../domain/key-filters.js';
import { expiresSoon, type KeyHealth } from '../operations/key-health.js';
import type { NewKey } from '../operations/create.js';
import { relativeTime } from './time.js';
import { stillDoes, type KeyState } from '../domain/key-state.js';

/** What a table shows for a field the server did not send. */
export const BLANK = '-';

/** Server text in a sentence of svc's own: one line, at most 200 characters (the renderer escapes it). */
export const shown = (value: string | null): string => (value === null ? BLANK : clip(value, 200));

export function statusSegment(status: string | null): Segment {
  if (status === null) return BLANK;
  if (status === 'enabled') return tone(status, 'green');
  if (status === 'disabled') return tone(status, 'yellow');
  if (status === 'expired') return tone(status, 'red');
  return status;
}

/** An ISO time for scripts, or nothing. */
function iso(ms: number | null): string {
  return ms === null ? '' : new Date(ms).toISOString();
}

/** The id column's width: ids are never cut, and a table keeps its first column whatever the width. */
const ID_WIDTH = 26;

/**
 * The table of keys, for `keys list`, `keys prune` and the interactive
 * manager; `nowMs` is the server's clock. On a narrow terminal the least
 * useful columns are left out first, a long name cut (down to 12) before
 * the expiry goes, down to the id, the name and the status, then the id and
 * the name, which is cut to what fits beside the id (`terminalColumns`: 40
 * leaves it 12).
 */
export function keyColumns(inUse: string | undefined, nowMs: number, terminalColumns = 80): Column<KeyView>[] {
  const nameWidth = Math.min(24, Math.max(8, terminalColumns - ID_WIDTH - 2));
  const when = (ms: number | null, known: boolean, none: string) => (!known ? BLANK : ms === null ? none : relativeTime(ms, nowMs));
  return [
    {
      header: 'ID',
      human: (k) => (inUse !== undefined && k.hint === inUse ? tone(`* ${shown(k.id)}`, 'bold') : `  ${shown(k.id)}`),
      plain: (k) => k.id ?? '',
    },
    // A long name is cut before the expiry, the last use or the status give way to it.
    { header: 'NAME', human: (k) => shown(k.name), plain: (k) => k.name ?? '', dropRank: 7, maxWidth: nameWidth, shrink: { rank: 3, minWidth: 12 } },
    { header: 'KEY', human: (k) => tone(shown(k.hint), 'dim'), plain: (k) => k.hint ?? '', dropRank: 5, maxWidth: 16 },
    { header: 'STATUS', human: (k) => statusSegment(keyStatus(k, nowMs)), plain: (k) => keyStatus(k, nowMs) ?? '', dropRank: 6, maxWidth: 12 },
    { header: 'WORKSPACE', human: (k) => shown(k.workspaceId), plain: (k) => k.workspaceId ?? '', dropRank: 2, maxWidth: 28 },
    { header: 'CREATED', human: (k) => when(k.createdAt, k.createdAt !== null, ''), plain: (k) => iso(k.createdAt), dropRank: 1 },
    { header: 'EXPIRES', human: (k) => when(k.expiresAt, k.expiresKnown, 'never'), plain: (k) => iso(k.expiresAt), dropRank: 3 },
    { header: 'LAST USED', human: (k) => when(k.lastUsedAt, k.lastUsedKnown, 'never'), plain: (k) => iso(k.lastUsedAt), dropRank: 4 },
  ];
}

/** One key's record: label, the value for a person (relative times, colour), the value for a script (ISO times). */
export function keyFields(key: KeyView, nowMs: number, inUse: string | undefined): Field[] {
  const time = (ms: number | null, known: boolean, none: string): Pick<Field, 'human' | 'plain'> => {
    if (!known) return { human: BLANK, plain: '' };
    if (ms === null) return { human: none, plain: '' };
    const at = new Date(ms).toISOString();
    return { human: `${at} (${relativeTime(ms, nowMs)})`, plain: at };
  };
  const status = keyStatus(key, nowMs);
  return [
    { label: 'ID', human: shown(key.id), plain: key.id ?? '' },
    { label: 'Name', human: shown(key.name), plain: key.name ?? '' },
    { label: 'Key', human: `${shown(key.hint)}${isKeyInUse(key, inUse) ? '  (the key svc is using)' : ''}`, plain: key.hint ?? '' },
    { label: 'Status', human: statusSegment(status), plain: status ?? '' },
    { label: 'Workspace', human: shown(key.workspaceId), plain: key.workspaceId ?? '' },
    { label: 'Created', ...time(key.createdAt, key.createdAt !== null, BLANK) },
    { label: 'Expires', ...time(key.expiresAt, key.expiresKnown, 'never') },
    { label: 'Last used', ...time(key.lastUsedAt, key.lastUsedKnown, 'never') },
  ];
}

/** A key as a confirmation names it: 'name' (id). */
export function keyLabel(key: { id: string; name: string | null }): string {
  return key.name === null ? shown(key.id) : `'${shown(key.name)}' (${shown(key.id)})`;
}

/** "key 'laptop' (key_…), expires in 3 months, workspace ws_…" */
export function describeNewKey({ view, nowMs }: NewKey): string {
  const parts = [`key${view.name === null ? '' : ` '${shown(view.name)}'`}${view.id === null ? '' : ` (${shown(view.id)})`}`];
  if (view.expiresKnown) parts.push(view.expiresAt === null ? 'never expires' : `expires ${relativeTime(view.expiresAt, nowMs)}`);
  if (view.workspaceId !== null) parts.push(`workspace ${shown(view.workspaceId)}`);
  return parts.join(', ');
}

/** Said on stderr wherever a new key's secret is printed (docs/contract.md §C3), `svc api` included. */
export function onlyTimeWarning(id: string | null): string {
  return (
    'This is the only time this secret is shown: store it now. ' +
    `If it is lost, it cannot be recovered: revoke the key (${revokeCommand(id)}) and create a new one.`
  );
}

/** The key-health warnings (docs/contract.md §C8), each one line. */
/** `byFlag`: the profile was chosen by --profile, which the commands suggested here must then carry too. */
export function healthWarnings(health: KeyHealth, days: number, profileName: string, byFlag: boolean): Line[] {
  const lines: Line[] = [];
  const profile = byFlag ? ` --profile ${shellWord(profileName)}` : '';
  const { expiry, pending, pendingOld } = health;
  if (expiry && expiresSoon(expiry, days)) {
    const when = new Date(expiry.expiresAt).toISOString();
    const left = expiry.expiresAt > expiry.nowMs ? `expires ${relativeTime(expiry.expiresAt, expiry.nowMs)} (${when})` : `expired at ${when}`;
    lines.push(`The key in use (${expiry.hint}) ${left}: replace it with \`svc keys rotate ${shellWord(expiry.id)}${profile}\`.`);
  }
  if (pending) {
    lines.push(
      `A rotation is pending in profile '${profileName}' since ${pending.since}: ${shown(pending.oldId)} ${pendingOldDoes(pendingOld, shown(pending.newId))}. ` +
        `Once everything uses the new key: \`svc keys rotate --finish${profile}\` (or \`--cancel\`).`,
    );
  }
  return lines;
}

/** What a pending rotation's old key does beside the new one (`old`: as the command's key list showed it; null: not shown). */
function pendingOldDoes(old: KeyState | null, newKey: string): string {
  if (old === null || old.works === 'unknown') return `is kept beside ${newKey}`;
  if (old.works === 'yes') return `still works beside ${newKey}`;
  return `${stillDoes(old)}; ${newKey} replaces it`;
}

/** One line for a key in confirmations. */
export function describeKey(key: KeyView, inUse: string | undefined, nowMs: number): string {
  const parts = [key.id, key.name, key.hint, keyStatus(key, nowMs)].filter((p): p is string => p !== null).map(shown);
  return `${parts.join('  ')}${isKeyInUse(key, inUse) ? '  (the key in use)' : ''}`;
}

/**
 * What a filter could not judge for want of its field, and why the list
 * may lack keys, one line each: what tells "no match" from "could not tell".
 * `fate` is what became of the keys not judged.
 */
export function listCaveats(unjudged: readonly Unjudged[], incomplete: string | null, fate: string): string[] {
  const lines = unjudged.map(({ flag, field, count }) =>
    `${count === 1 ? '1 key shows' : `${count} keys show`} no ${field} svc can read: ${flag} could not judge ${count === 1 ? 'it' : 'them'}, and ${fate}.`,
  );
  if (incomplete !== null) lines.push(incompleteCaveat(incomplete));
  return lines;
}

/** Why the list may lack keys the server has (KeyList.incomplete), as one line. */
export function incompleteCaveat(incomplete: string): string {
  return `The key list may be incomplete: ${clip(incomplete, 200)}.`;
}
