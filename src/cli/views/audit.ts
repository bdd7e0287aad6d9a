/** How an audit looks: the table of the keys it found, its --json document, and the summary lines. */
import { keyStatus } from '../../client/key-view.js';
import { AUDIT_RULES, type Audit, type AuditField, type AuditRule, type Breach, type Finding, type NotJudged } from '../operations/audit.js';
import type { Column } from '../terminal/renderer.js';
import { tone } from '../text/text.js';
import { BLANK, shown, statusSegment } from './keys.js';
import { relativeTime } from './time.js';

/** The policy as it was given on the command line, for the --json document. */
export interface PolicyGiven {
  maxAge: string | null;
  requireExpiry: boolean;
  expiringWithin: string | null;
  unusedFor: string | null;
  skipDisabled: boolean;
  strict: boolean;
}

const FIELD_WORDS: Record<AuditField, string> = { createdAt: 'creation time', expiresAt: 'expiry time', lastUsedAt: 'last use' };

const iso = (ms: number | null) => (ms === null ? '' : new Date(ms).toISOString());

/** "max-age 4 months", "require-expiry", "unused-for never used": the rule and, in short, what broke it. */
function breachText(breach: Breach, nowMs: number): string {
  if (breach.at === null) return breach.rule;
  if (breach.rule === 'unused-for' && breach.field === 'createdAt') return 'unused-for never used';
  if (breach.rule === 'expiring-within') return `expiring-within ${breach.at <= nowMs ? 'expired' : relativeTime(breach.at, nowMs)}`;
  return `${breach.rule} ${relativeTime(breach.at, nowMs).replace(/ ago$/, '')}`;
}

/** "unused-for (no last use)" */
function notJudgedText(item: NotJudged): string {
  return `${item.rule} (no ${FIELD_WORDS[item.missing]})`;
}

/**
 * The keys that break a rule or could not be judged. On a terminal each
 * rule comes with what broke it; piped, the rule names, comma-separated,
 * and the times the rules read as ISO times.
 */
export function auditColumns(nowMs: number, terminalColumns = 80): Column<Finding>[] {
  const nameWidth = Math.min(24, Math.max(8, terminalColumns - 28));
  return [
    { header: 'ID', human: (f) => (f.inUse ? tone(`* ${shown(f.view.id)}`, 'bold') : `  ${shown(f.view.id)}`), plain: (f) => f.view.id ?? '' },
    { header: 'NAME', human: (f) => shown(f.view.name), plain: (f) => f.view.name ?? '', dropRank: 6, maxWidth: nameWidth },
    { header: 'KEY', human: (f) => tone(shown(f.view.hint), 'dim'), plain: (f) => f.view.hint ?? '', dropRank: 2, maxWidth: 16 },
    { header: 'STATUS', human: (f) => statusSegment(keyStatus(f.view, nowMs)), plain: (f) => keyStatus(f.view, nowMs) ?? '', dropRank: 3, maxWidth: 12 },
    {
      header: 'BREAKS',
      human: (f) => (f.breaks.length === 0 ? BLANK : tone(f.breaks.map((b) => breachText(b, nowMs)).join(', '), 'red')),
      plain: (f) => f.breaks.map((b) => b.rule).join(','),
    },
    {
      header: 'NOT JUDGED',
      human: (f) => (f.notJudged.length === 0 ? BLANK : tone(f.notJudged.map(notJudgedText).join(', '), 'yellow')),
      plain: (f) => f.notJudged.map((n) => n.rule).join(','),
      dropRank: 5,
    },
    { header: 'CREATED', human: (f) => iso(f.view.createdAt), plain: (f) => iso(f.view.createdAt), dropRank: 0 },
    { header: 'EXPIRES', human: (f) => iso(f.view.expiresAt), plain: (f) => iso(f.view.expiresAt), dropRank: 0 },
    { header: 'LAST USED', human: (f) => iso(f.view.lastUsedAt), plain: (f) => iso(f.view.lastUsedAt), dropRank: 0 },
  ];
}

/** The --json document: the verdict, the policy, what was audited and, for each key found, its rules and the server's record. */
export function auditDocument(audit: Audit, policy: PolicyGiven, passed: boolean) {
  return {
    passed,
    policy,
    now: iso(audit.list.nowMs),
    audited: audit.audited,
    skipped: audit.skipped,
    incomplete: audit.list.incomplete,
    keys: audit.findings.map((f) => ({
      id: f.view.id,
      name: f.view.name,
      hint: f.view.hint,
      status: keyStatus(f.view, audit.list.nowMs),
      inUse: f.inUse,
      breaks: f.breaks.map((b) => ({ rule: b.rule, field: b.field, value: b.at === null ? null : iso(b.at) })),
      notJudged: f.notJudged.map((n) => ({ rule: n.rule, missing: n.missing })),
      record: f.document,
    })),
  };
}

/** Which keys were audited and which were left out, for the summary line. */
export function auditScope(audit: Audit): string {
  const { expired, revoked, disabled } = audit.skipped;
  const left = [expired > 0 && `${expired} expired`, revoked > 0 && `${revoked} revoked`, disabled > 0 && `${disabled} disabled`].filter(Boolean);
  const keys = audit.audited === 1 ? '1 key' : `${audit.audited} keys`;
  return left.length === 0 ? keys : `${keys} (${left.join(', ')} left out)`;
}

/** How many keys break the policy and how many could not be judged, per rule: "max-age 2, require-expiry 1". */
export function perRule(findings: readonly Finding[], pick: (f: Finding) => readonly { rule: AuditRule }[]): string {
  const count = (rule: AuditRule) => findings.filter((f) => pick(f).some((item) => item.rule === rule)).length;
  return AUDIT_RULES.filter((rule) => count(rule) > 0)
    .map((rule) => `${rule} ${count(rule)}`)
    .join(', ');
}
