import { isWellFormedKey } from '../contract/key-format.js';

/**
 * A key record as svc reads it from any server. The spec names none of the
 * record's fields, so each is looked up under our name and the other
 * spellings services use (SPELLINGS), and a missing or odd value is null rather than a crash
 * (docs/contract.md §C6). Times are epoch milliseconds. `--json` output never goes
 * through this: it prints the server's document as it came.
 */
export interface KeyView {
  id: string | null;
  name: string | null;
  hint: string | null;
  enabled: boolean | null;
  /** The server's own word for the state, when it gives one. */
  status: string | null;
  workspaceId: string | null;
  createdAt: number | null;
  /** null both for "never" and for "not said"; `expiresKnown` tells them apart. */
  expiresAt: number | null;
  expiresKnown: boolean;
  lastUsedAt: number | null;
  lastUsedKnown: boolean;
}

export interface WorkspaceView {
  id: string | null;
  name: string | null;
  plan: string | null;
  requestsPerMinute: number | null;
}

type Doc = Record<string, unknown>;

export function isObject(value: unknown): value is Doc {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The spellings services use for each field, ours first. A name may be a
 * label or a title; a creation time `created` or `creation_time`; and so on:
 * the look for a lost create and the filters depend on reading them.
 */
const SPELLINGS = {
  id: ['id', 'key_id', 'keyId'],
  name: ['name', 'label', 'display_name', 'displayName', 'title'],
  hint: ['hint'],
  enabled: ['enabled', 'active', 'is_active', 'isActive'],
  status: ['status', 'state'],
  workspaceId: ['workspaceId', 'workspace_id'],
  createdAt: ['createdAt', 'created_at', 'created', 'creation_time', 'creationTime', 'createTime', 'create_time', 'created_on', 'createdOn', 'inserted_at', 'insertedAt', 'issued_at', 'issuedAt'],
  expiresAt: ['expiresAt', 'expires_at', 'expires', 'expiry', 'expiration', 'expires_on', 'expiresOn', 'expireTime', 'expire_time'],
  lastUsedAt: ['lastUsedAt', 'last_used_at', 'last_used', 'lastUsed', 'last_used_on', 'lastUsedOn'],
} as const;

export function readKey(value: unknown): KeyView {
  const doc = isObject(value) ? value : {};
  const expires = readOptionalTime(field(doc, ...SPELLINGS.expiresAt));
  const lastUsed = readOptionalTime(field(doc, ...SPELLINGS.lastUsedAt));
  const enabled = field(doc, ...SPELLINGS.enabled);
  return {
    id: text(field(doc, ...SPELLINGS.id)),
    name: text(field(doc, ...SPELLINGS.name)),
    hint: text(field(doc, ...SPELLINGS.hint)),
    enabled: typeof enabled === 'boolean' ? enabled : null,
    status: text(field(doc, ...SPELLINGS.status)),
    workspaceId: text(field(doc, ...SPELLINGS.workspaceId)),
    createdAt: readTime(field(doc, ...SPELLINGS.createdAt)),
    expiresAt: expires.at,
    expiresKnown: expires.known,
    lastUsedAt: lastUsed.at,
    lastUsedKnown: lastUsed.known,
  };
}

/**
 * The record says nothing of a use: its last use is null, or it has no
 * such field (a server that does not show it). A value svc cannot read as
 * a time may still say the key was used, so it is no "never".
 */
export function neverUsed(value: unknown): boolean {
  const used = field(isObject(value) ? value : {}, ...SPELLINGS.lastUsedAt);
  return used === undefined || used === null;
}

/** The records of a list answer, `{"keys": [...]}`, as they came; anything else is an empty list. */
export function keyDocuments(body: unknown): unknown[] {
  const keys = isObject(body) ? body.keys : undefined;
  return Array.isArray(keys) ? keys : [];
}

export function readKeyList(body: unknown): KeyView[] {
  return keyDocuments(body).map(readKey);
}

export function readWorkspace(value: unknown): WorkspaceView {
  const doc = isObject(value) ? value : {};
  const rpm = field(doc, 'requestsPerMinute', 'requests_per_minute');
  return {
    id: text(field(doc, 'id')),
    name: text(field(doc, 'name')),
    plan: text(field(doc, 'plan')),
    requestsPerMinute: typeof rpm === 'number' && Number.isFinite(rpm) ? rpm : null,
  };
}

/**
 * The key's state at `nowMs` (the server's clock): the server's own word
 * when it gives one, else derived as the contract derives it, else null.
 */
export function keyStatus(key: KeyView, nowMs: number): string | null {
  if (key.status !== null) return key.status;
  if (key.expiresAt !== null && key.expiresAt <= nowMs) return 'expired';
  if (key.enabled === null) return null;
  return key.enabled ? 'enabled' : 'disabled';
}

function field(doc: Doc, ...names: string[]): unknown {
  for (const name of names) if (Object.hasOwn(doc, name)) return doc[name];
  return undefined;
}

/** Ids may be numbers on another server; they are shown and sent as text. */
function text(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

/** Below this a number is taken for epoch seconds: 1e11 s is the year 5138, 1e11 ms is 1973. */
const SECONDS_LIMIT = 1e11;

/** An RFC 3339 string, or epoch seconds or milliseconds (as a number or digits). */
export function readTime(value: unknown): number | null {
  let ms: number;
  if (typeof value === 'number') ms = value;
  else if (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value.trim())) ms = Number(value);
  else if (typeof value === 'string') return nullIfNaN(Date.parse(value));
  else return null;
  return nullIfNaN(Math.abs(ms) < SECONDS_LIMIT ? ms * 1000 : ms);
}

/** A time that may be null for "never": known when it is null or readable. */
function readOptionalTime(value: unknown): { at: number | null; known: boolean } {
  const at = readTime(value);
  return { at, known: value === null || at !== null };
}

function nullIfNaN(ms: number): number | null {
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? ms : null;
}

/**
 * The plaintext of a new key (docs/contract.md §C6): the `secret` field, else the
 * one string of the key format at the top level or one object down. Two
 * different candidates are no answer: guessing wrong would lose the key.
 */
export function findSecret(document: unknown): string | null {
  if (!isObject(document)) return null;
  if (typeof document.secret === 'string' && document.secret !== '') return document.secret;
  const found = new Set<string>();
  const look = (value: unknown) => {
    if (typeof value === 'string' && isWellFormedKey(value)) found.add(value);
  };
  for (const value of Object.values(document)) {
    look(value);
    if (isObject(value)) Object.values(value).forEach(look);
  }
  return found.size === 1 ? [...found][0]! : null;
}
