/**
 * How a scan reads (docs/contract.md §C11): the table of places, the
 * --json document and the summary. Nothing here sees a key's secret: the
 * report holds hints and fingerprints only.
 */
import type { KeyView } from '../../client/key-view.js';
import type { Ended } from '../operations/end-found-keys.js';
import type { Verdict } from '../operations/verify-found.js';
import type { Finding, Place, Tally } from '../sources/places.js';
import type { Column } from '../terminal/renderer.js';
import { tone, type Segment } from '../text/text.js';
import { shown } from './keys.js';

/** A key found, as the report shows it: no secret. */
export interface ReportedKey {
  hint: string;
  fingerprint: string;
  places: Omit<Finding, 'key'>[];
  verdict: Verdict;
  ended: Omit<Ended, 'key'> | null;
}

export interface ScanReport {
  /** What was scanned: paths, a repository's history, its index, standard input. */
  target: 'files' | 'git' | 'index' | 'stdin';
  keys: ReportedKey[];
  tally: Tally;
  ignored: { byFile: number; byMarker: number };
  ignoreFiles: string[];
  /** The server the keys were checked against, null under --no-verify. */
  server: string | null;
}

/** A row of the table: one place of one key. */
interface Row {
  key: ReportedKey;
  place: Omit<Finding, 'key'>;
}

export function where(place: Place): string {
  switch (place.source) {
    case 'file':
    case 'index':
      return `${place.path}:${place.line}`;
    case 'git':
      return `${place.commit === null ? place.blob.slice(0, 12) : place.commit.slice(0, 12)}:${place.path}:${place.line}`;
    case 'stdin':
      return `stdin:${place.line}`;
  }
}

export type Revocation = 'this-run' | 'already-gone' | 'failed' | 'not-tried';

/**
 * What --revoke did to a key: this run's revoke landed, the key was gone
 * already (another revoke, a second scan at the same time), the revoke
 * failed or was never tried (a stop); null: it was not to be revoked.
 */
export function revocation(key: ReportedKey): Revocation | null {
  const state = key.ended?.result.state;
  if (state === undefined) return null;
  if (state === 'done') return 'this-run';
  if (state === 'gone') return 'already-gone';
  return state === 'not-tried' ? 'not-tried' : 'failed';
}

/** Why --revoke left a live key live, for the --json document and the line stderr gets. */
export function revokeFailure(key: ReportedKey): string | null {
  const result = key.ended?.result;
  if (result?.state === 'failed') return `the revoke failed: ${(result.error as Error).message}`;
  if (result?.state === 'not-tried') return 'a stop came before its revoke';
  return null;
}

const ended = (key: ReportedKey) => {
  const how = revocation(key);
  return how === 'this-run' || how === 'already-gone';
};

/** The state in one word or two: live, revoked, not live (disabled), not checked. */
export function stateWord(key: ReportedKey): string {
  const { verdict } = key;
  if (ended(key)) {
    const word = revocation(key) === 'this-run' ? 'revoked' : 'already revoked';
    return key.ended!.refused === false ? `${word}, still answers` : word;
  }
  if (verdict.state === 'live') return verdict.by === 'hint' ? 'live (by hint)' : 'live';
  if (verdict.state === 'not-live') return verdict.why === 'refused' ? 'not live' : `not live (${verdict.why})`;
  return 'not checked';
}

function stateSegment(key: ReportedKey): Segment {
  const word = stateWord(key);
  if (word.startsWith('live') || word.endsWith('still answers')) return tone(word, 'red');
  if (word === 'not checked') return tone(word, 'yellow');
  return tone(word, 'dim');
}

/** "key_abc 'ci' in ws_1", or why the key is no one's svc can name. */
export function whose(key: ReportedKey): string {
  const { verdict } = key;
  if (verdict.state === 'not-checked') return verdict.why;
  const record = verdict.owner?.record;
  if (!record) return verdict.state === 'live' ? 'no list svc can read shows which key' : 'unknown, revoked, or off in another account';
  return ownerText(record);
}

/** Name first, as a person knows a key: "'ci' (key_…) in ws_…". */
function ownerText(record: KeyView): string {
  const id = record.id ?? 'no id';
  const workspace = record.workspaceId === null ? '' : ` in ${record.workspaceId}`;
  return `${record.name === null ? id : `'${record.name}' (${id})`}${workspace}`;
}

export function scanColumns(): Column<Row>[] {
  return [
    { header: 'WHERE', human: (r) => shown(where(r.place.place)), plain: (r) => where(r.place.place), shrink: { rank: 1, minWidth: 16 } },
    { header: 'KEY', human: (r) => tone(r.key.hint, 'dim'), plain: (r) => r.key.hint, maxWidth: 14 },
    { header: 'STATE', human: (r) => stateSegment(r.key), plain: (r) => stateWord(r.key) },
    { header: 'WHOSE', human: (r) => shown(whose(r.key)), plain: (r) => whose(r.key), dropRank: 2, shrink: { rank: 0, minWidth: 12 } },
    { header: 'TEXT', human: (r) => tone(shown(r.place.context), 'dim'), plain: (r) => r.place.context, dropRank: 1, maxWidth: 60 },
  ];
}

/** Every place of every key, in the order found: by key, then by place. */
export function scanRows(report: ScanReport): Row[] {
  return report.keys.flatMap((key) => key.places.map((place) => ({ key, place })));
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

function ownerDocument(verdict: Verdict) {
  if (verdict.state === 'not-checked' || verdict.owner === null) return null;
  const r = verdict.owner.record;
  return { id: r.id, name: r.name, workspaceId: r.workspaceId, createdAt: iso(r.createdAt), lastUsedAt: iso(r.lastUsedAt), expiresAt: iso(r.expiresAt) };
}

function placeDocument({ place, length, escaped, context }: Omit<Finding, 'key'>) {
  const { source, ...rest } = place;
  return { source, ...rest, endColumn: place.column + length, escaped, context };
}

/** The --json document (docs/scan.schema.json). */
export function scanDocument(report: ScanReport) {
  const counts = summaryCounts(report);
  return {
    target: report.target,
    server: report.server,
    summary: counts,
    keys: report.keys.map((key) => ({
      fingerprint: key.fingerprint,
      hint: key.hint,
      state: key.verdict.state,
      why: key.verdict.state === 'live' ? revokeFailure(key) : key.verdict.why,
      verifiedBy: key.verdict.state === 'live' ? key.verdict.by : null,
      key: ownerDocument(key.verdict),
      revoked: revocation(key),
      refusedAfterRevoke: key.ended?.refused ?? null,
      places: key.places.map(placeDocument),
    })),
    ignored: report.ignored,
    ignoreFiles: report.ignoreFiles,
    scanned: {
      read: report.tally.read,
      bytes: report.tally.bytes,
      skipped: {
        tooLarge: report.tally.tooLarge,
        special: report.tally.special,
        links: report.tally.links,
        unreadable: report.tally.unreadableCount,
        gitDirs: report.tally.gitDirs,
      },
    },
  };
}

export interface SummaryCounts {
  keys: number;
  places: number;
  live: number;
  notLive: number;
  notChecked: number;
  revoked: number;
  /** Found already revoked by another run's revoke, which this run set out to do. */
  alreadyRevoked: number;
}

export function summaryCounts(report: ScanReport): SummaryCounts {
  const revoked = report.keys.filter((k) => revocation(k) === 'this-run');
  return {
    keys: report.keys.length,
    places: report.keys.reduce((n, k) => n + k.places.length, 0),
    live: report.keys.filter((k) => stillLive(k)).length,
    notLive: report.keys.filter((k) => k.verdict.state === 'not-live').length,
    notChecked: report.keys.filter((k) => k.verdict.state === 'not-checked').length,
    revoked: revoked.length,
    alreadyRevoked: report.keys.filter((k) => revocation(k) === 'already-gone').length,
  };
}

/** Live, and not ended by this run (a revoke svc saw refused, or one the spec's "within seconds" may still be finishing). */
export function stillLive(key: ReportedKey): boolean {
  if (key.verdict.state !== 'live') return false;
  return !(ended(key) && key.ended!.refused !== false);
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** What was read and what was left, in a line, for stderr. */
export function scannedLine(report: ScanReport): string {
  const { tally } = report;
  const read = report.target === 'git' ? plural(tally.read, 'blob') : report.target === 'stdin' ? 'standard input' : plural(tally.read, 'file');
  const left = [
    tally.tooLarge > 0 ? `${tally.tooLarge} over --max-file-size` : '',
    tally.special > 0 ? plural(tally.special, 'FIFO, socket or device', 'FIFOs, sockets or devices') : '',
    tally.links > 0 ? `${plural(tally.links, 'link')} not followed` : '',
    tally.unreadableCount > 0 ? `${tally.unreadableCount} unreadable (${tally.unreadable.map(shown).join(', ')}${tally.unreadableCount > tally.unreadable.length ? ', …' : ''})` : '',
    tally.gitDirs > 0 ? `${plural(tally.gitDirs, '.git directory', '.git directories')} (svc scan --git reads history)` : '',
  ].filter((part) => part !== '');
  const ignored = report.ignored.byFile + report.ignored.byMarker;
  return `Scanned ${read} (${megabytes(tally.bytes)})${left.length > 0 ? `; skipped ${left.join(', ')}` : ''}${ignored > 0 ? `; ignored ${plural(ignored, 'place')} (${ignoredWords(report)})` : ''}.`;
}

function ignoredWords(report: ScanReport): string {
  return [report.ignored.byFile > 0 ? `${report.ignored.byFile} by fingerprint` : '', report.ignored.byMarker > 0 ? `${report.ignored.byMarker} by svc-scan: ignore` : ''].filter(Boolean).join(', ');
}

function megabytes(bytes: number): string {
  return bytes < 1024 * 1024 ? `${Math.ceil(bytes / 1024)} KB` : `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** The outcome in a sentence: how many keys, in how many places, and their states. */
export function verdictLine(counts: SummaryCounts): string {
  const parts = [
    counts.live > 0 ? `${counts.live} live` : '',
    counts.revoked > 0 ? `${counts.revoked} revoked by this run` : '',
    counts.alreadyRevoked > 0 ? `${counts.alreadyRevoked} already revoked by another` : '',
    counts.notLive > 0 ? `${counts.notLive} not live` : '',
    counts.notChecked > 0 ? `${counts.notChecked} not checked` : '',
  ].filter(Boolean);
  return `Found ${plural(counts.keys, 'key')} in ${plural(counts.places, 'place')}: ${parts.join(', ')}.`;
}
