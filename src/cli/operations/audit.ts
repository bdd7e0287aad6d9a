/**
 * `svc keys audit` (docs/contract.md §C8): every key judged against a
 * policy, as data. Read-only: one read of the whole list, nothing changed.
 */
import type { ApiClient, KeyList } from '../../client/api.js';
import { keyStatus, type KeyView } from '../../client/key-view.js';
import { lastActivity } from '../domain/key-filters.js';
import { isKeyInUse } from '../domain/keys.js';
import type { KeyRecord } from './keys.js';

/** The rules given; at least one. Durations in milliseconds. */
export interface AuditPolicy {
  maxAgeMs?: number;
  requireExpiry?: boolean;
  expiringWithinMs?: number;
  unusedForMs?: number;
  /** Leave disabled keys out of the audit. */
  skipDisabled?: boolean;
}

/** Each rule by the flag that sets it, without the dashes, in the order svc names them. */
export const AUDIT_RULES = ['max-age', 'require-expiry', 'expiring-within', 'unused-for'] as const;
export type AuditRule = (typeof AUDIT_RULES)[number];

/** The record field a rule reads, as the contract (§A4) names it. */
export type AuditField = 'createdAt' | 'expiresAt' | 'lastUsedAt';

/** A rule the key breaks, and the value that breaks it (null: never expires). */
export interface Breach {
  rule: AuditRule;
  field: AuditField;
  at: number | null;
}

/** A rule that could not judge the key: it shows no value svc can read for the field. */
export interface NotJudged {
  rule: AuditRule;
  missing: AuditField;
}

export interface Finding extends KeyRecord {
  breaks: Breach[];
  notJudged: NotJudged[];
  /** The key svc is using: true, false, or null where the server shows no hints to tell. */
  inUse: boolean | null;
}

export interface Audit {
  list: KeyList;
  /** The keys judged: every key but those left out (below). */
  audited: number;
  /** Keys left out: they cannot authenticate (expired, revoked), or disabled ones under `skipDisabled`. */
  skipped: { expired: number; revoked: number; disabled: number };
  /** The keys that break a rule or that a rule could not judge, in the list's order. */
  findings: Finding[];
}

/**
 * The audit's outcome: `broken` when a key breaks a rule (or, `strict`,
 * could not be judged); `unsure` when none does but the list may lack keys,
 * which could; else `passed`.
 */
export function auditVerdict(audit: Audit, strict: boolean): 'passed' | 'broken' | 'unsure' {
  const broken = audit.findings.some((f) => f.breaks.length > 0 || (strict && f.notJudged.length > 0));
  if (broken) return 'broken';
  return audit.list.incomplete === null ? 'passed' : 'unsure';
}

/** Reads every page and judges each key that could authenticate (or, disabled, could again after one `keys enable`). */
export async function auditKeys(client: ApiClient, policy: AuditPolicy): Promise<Audit> {
  const list = await client.listAllKeys();
  const audit: Audit = { list, audited: 0, skipped: { expired: 0, revoked: 0, disabled: 0 }, findings: [] };
  list.documents.forEach((document, i) => {
    const view = list.keys[i]!;
    const left = leftOut(view, policy, list.nowMs);
    if (left !== null) {
      audit.skipped[left]++;
      return;
    }
    audit.audited++;
    const { breaks, notJudged } = judgeKey(view, policy, list.nowMs);
    if (breaks.length > 0 || notJudged.length > 0) audit.findings.push({ document, view, breaks, notJudged, inUse: isKeyInUse(view, client.keyHint) });
  });
  return audit;
}

/**
 * Why a key is not audited, or null when it is. An expired or revoked key
 * cannot authenticate again; a disabled one can, after one `keys enable`,
 * so it is audited unless asked not to be. A key whose state cannot be
 * read is audited: nothing shows it harmless.
 */
function leftOut(key: KeyView, policy: AuditPolicy, nowMs: number): 'expired' | 'revoked' | 'disabled' | null {
  const status = keyStatus(key, nowMs);
  if (status === 'expired' || status === 'revoked') return status;
  if (status === 'disabled' && policy.skipDisabled) return 'disabled';
  return null;
}

/** Every rule given, against one key at `nowMs` (the server's clock); each edge counts as broken, as `keys list --expiring` and `prune --unused-for` count theirs. */
export function judgeKey(key: KeyView, policy: AuditPolicy, nowMs: number): { breaks: Breach[]; notJudged: NotJudged[] } {
  const breaks: Breach[] = [];
  const notJudged: NotJudged[] = [];
  if (policy.maxAgeMs !== undefined) {
    if (key.createdAt === null) notJudged.push({ rule: 'max-age', missing: 'createdAt' });
    else if (key.createdAt <= nowMs - policy.maxAgeMs) breaks.push({ rule: 'max-age', field: 'createdAt', at: key.createdAt });
  }
  if (policy.requireExpiry) {
    if (!key.expiresKnown) notJudged.push({ rule: 'require-expiry', missing: 'expiresAt' });
    else if (key.expiresAt === null) breaks.push({ rule: 'require-expiry', field: 'expiresAt', at: null });
  }
  if (policy.expiringWithinMs !== undefined) {
    if (!key.expiresKnown) notJudged.push({ rule: 'expiring-within', missing: 'expiresAt' });
    else if (key.expiresAt !== null && key.expiresAt <= nowMs + policy.expiringWithinMs) breaks.push({ rule: 'expiring-within', field: 'expiresAt', at: key.expiresAt });
  }
  if (policy.unusedForMs !== undefined) {
    const since = lastActivity(key);
    // Not reported at all, or never used and with no creation time to count from.
    if (since === null) notJudged.push({ rule: 'unused-for', missing: key.lastUsedKnown ? 'createdAt' : 'lastUsedAt' });
    else if (since <= nowMs - policy.unusedForMs) breaks.push({ rule: 'unused-for', field: key.lastUsedAt === null ? 'createdAt' : 'lastUsedAt', at: since });
  }
  return { breaks, notJudged };
}
