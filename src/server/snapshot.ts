import { KEY_PREFIX } from '../contract/key-format.js';
import { isPlan, type Plan } from '../contract/plans.js';
import { ID_LENGTH, ID_PREFIX, isId, type IdKind } from './ids.js';
import { nameProblem } from './validation.js';

/**
 * The state file's format, read and written here alone: the saved form of the
 * server's state, its parsing and its bytes. Timestamps are ISO strings so the
 * file stays readable; key material is the SHA-256 hash only.
 */
export interface Snapshot {
  format: typeof FORMAT;
  version: typeof VERSION;
  users: SavedUser[];
  workspaces: SavedWorkspace[];
  keys: SavedKey[];
}

export interface SavedUser {
  id: string;
  name: string;
  activeWorkspaceId: string;
  workspaceIds: string[];
}

export interface SavedWorkspace {
  id: string;
  name: string;
  plan: Plan;
}

export interface SavedKey {
  id: string;
  userId: string;
  workspaceId: string;
  name: string;
  hash: string;
  hint: string;
  enabled: boolean;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

export const FORMAT = 'svc-local-state';
export const VERSION = 1;

export class SnapshotError extends Error {}

const LINE_SEPARATOR = Buffer.from(',\n');

/** One record as its line of the file. */
export function encodeRecord(record: SavedUser | SavedWorkspace | SavedKey): Buffer {
  return Buffer.from(JSON.stringify(record));
}

/**
 * A state as the file's bytes, in order, in pieces: JSON, one record per line,
 * readable and diffable. Key lines come ready-made (encodeRecord), so a
 * caller can keep and reuse the line of a key that has not changed.
 */
export function encodeState(users: SavedUser[], workspaces: SavedWorkspace[], keyLines: Iterable<Buffer>): Buffer[] {
  const parts: Buffer[] = [Buffer.from(`{"format":${JSON.stringify(FORMAT)},"version":${VERSION},\n`)];
  const section = (name: string, lines: Iterable<Buffer>, end: string) => {
    parts.push(Buffer.from(`"${name}":[\n`));
    let first = true;
    for (const line of lines) {
      if (!first) parts.push(LINE_SEPARATOR);
      parts.push(line);
      first = false;
    }
    parts.push(Buffer.from(`\n]${end}`));
  };
  section('users', users.map(encodeRecord), ',\n');
  section('workspaces', workspaces.map(encodeRecord), ',\n');
  section('keys', keyLines, '}\n');
  return parts;
}

type Obj = Record<string, unknown>;

const WORKSPACE_FIELDS = ['id', 'name', 'plan'] as const satisfies readonly (keyof SavedWorkspace)[];
const USER_FIELDS = ['id', 'name', 'activeWorkspaceId', 'workspaceIds'] as const satisfies readonly (keyof SavedUser)[];
/** A key's fields in the file; the store keeps the same ones, in memory (StoredKey). */
export const KEY_FIELDS = [
  'id',
  'userId',
  'workspaceId',
  'name',
  'hash',
  'hint',
  'enabled',
  'createdAt',
  'expiresAt',
  'lastUsedAt',
] as const satisfies readonly (keyof SavedKey)[];

/** keyHint's shape: the prefix, the first and last 4 of the key's base62 body. */
const HINT = new RegExp(`^${KEY_PREFIX}[A-Za-z0-9]{4}\u2026[A-Za-z0-9]{4}$`);

/**
 * Checks every field and cross-reference, so a damaged file is refused whole
 * rather than half-loaded; and refuses a record the API could not have made
 * (a name it would refuse, an id or hint of another shape, a field it never
 * writes), since the server answers for every record it serves as if it had.
 */
export function parseSnapshot(value: unknown): Snapshot {
  const root = object(value, 'the document');
  onlyFields(root, ['format', 'version', 'users', 'workspaces', 'keys'], 'the document');
  if (root.format !== FORMAT) throw new SnapshotError(`"format" is not "${FORMAT}"`);
  if (root.version !== VERSION) throw new SnapshotError(`unsupported "version" ${JSON.stringify(root.version)}`);

  const workspaces = array(root.workspaces, 'workspaces').map((item, i): SavedWorkspace => {
    const { r, id, label } = record(item, `workspaces[${i}]`, 'workspace', WORKSPACE_FIELDS);
    const plan = r.plan;
    if (!isPlan(plan)) throw new SnapshotError(`${label}: "plan" is not a known plan`);
    return { id, name: name(r.name, label), plan };
  });
  const workspaceIds = unique(workspaces.map((w) => w.id), 'two workspaces share an id');
  if (workspaces.length === 0) throw new SnapshotError('there are no workspaces');

  const users = array(root.users, 'users').map((item, i): SavedUser => {
    const { r, id, label } = record(item, `users[${i}]`, 'user', USER_FIELDS);
    const memberOf = array(r.workspaceIds, `${label}: "workspaceIds"`).map((w) => {
      if (!isId('workspace', w) || !workspaceIds.has(w)) throw new SnapshotError(`${label}: "workspaceIds" names an unknown workspace`);
      return w;
    });
    unique(memberOf, `${label}: "workspaceIds" names a workspace twice`);
    const active = r.activeWorkspaceId;
    if (!isId('workspace', active) || !memberOf.includes(active)) {
      throw new SnapshotError(`${label}: "activeWorkspaceId" is not one of its workspaces`);
    }
    return { id, name: name(r.name, label), activeWorkspaceId: active, workspaceIds: memberOf };
  });
  if (users.length === 0) throw new SnapshotError('there are no users');
  const usersById = new Map(users.map((u) => [u.id, u]));
  if (usersById.size !== users.length) throw new SnapshotError('two users share an id');

  const keys = array(root.keys, 'keys').map((item, i): SavedKey => {
    const { r, id, label } = record(item, `keys[${i}]`, 'key', KEY_FIELDS);
    const user = isId('user', r.userId) ? usersById.get(r.userId) : undefined;
    if (!user) throw new SnapshotError(`${label}: "userId" names an unknown user`);
    const workspaceId = r.workspaceId;
    if (!isId('workspace', workspaceId) || !workspaceIds.has(workspaceId)) throw new SnapshotError(`${label}: "workspaceId" names an unknown workspace`);
    // A key is anchored to a workspace of its user's; any other would let it reach a workspace its user is not in.
    if (!user.workspaceIds.includes(workspaceId)) throw new SnapshotError(`${label}: "workspaceId" is not one of its user's workspaces`);
    if (typeof r.hint !== 'string' || !HINT.test(r.hint)) throw new SnapshotError(`${label}: "hint" is not of the form sk_abcd\u2026wxyz`);
    return {
      id,
      userId: user.id,
      workspaceId,
      name: name(r.name, label),
      hash: hash(r.hash, label),
      hint: r.hint,
      enabled: boolean(r.enabled, label, 'enabled'),
      createdAt: timestamp(r.createdAt, label, 'createdAt'),
      expiresAt: r.expiresAt === null ? null : timestamp(r.expiresAt, label, 'expiresAt'),
      lastUsedAt: r.lastUsedAt === null ? null : timestamp(r.lastUsedAt, label, 'lastUsedAt'),
    };
  });
  unique(keys.map((k) => k.id), 'two keys share an id');
  unique(keys.map((k) => k.hash), 'two keys share a hash');

  return { format: FORMAT, version: VERSION, users, workspaces, keys };
}

/**
 * One record: an object with no field but `fields`, whose id is one the
 * server makes. `label` names it in messages by place and id, so it can be
 * found in the file; values are never quoted, as they may hold anything.
 */
function record(value: unknown, where: string, kind: IdKind, fields: readonly string[]): { r: Obj; id: string; label: string } {
  const r = object(value, where);
  if (!isId(kind, r.id)) {
    throw new SnapshotError(`${where}: "id" is not a ${kind} id as the server makes them (${ID_PREFIX[kind]} and ${ID_LENGTH} of 0-9, a-z)`);
  }
  const label = `${where} (${r.id})`;
  onlyFields(r, fields, label);
  return { r, id: r.id, label };
}

function onlyFields(r: Obj, fields: readonly string[], label: string): void {
  const extra = Object.keys(r).find((field) => !fields.includes(field));
  if (extra !== undefined) throw new SnapshotError(`${label} has a field the format does not have: ${JSON.stringify(extra)}`);
}

function object(value: unknown, where: string): Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SnapshotError(`${where} is not an object`);
  }
  return value as Obj;
}

function array(value: unknown, where: string): unknown[] {
  if (!Array.isArray(value)) throw new SnapshotError(`${where} is not an array`);
  return value;
}

/** As the API stores a name: already trimmed, and then what validName asks. */
function name(value: unknown, label: string): string {
  if (typeof value !== 'string') throw new SnapshotError(`${label}: "name" is not a string`);
  if (value !== value.trim()) throw new SnapshotError(`${label}: "name" begins or ends with white space, which the API trims`);
  const problem = nameProblem(value);
  if (problem) throw new SnapshotError(`${label}: "name" ${problem}`);
  return value;
}

function boolean(value: unknown, label: string, field: string): boolean {
  if (typeof value !== 'boolean') throw new SnapshotError(`${label}: "${field}" is not a boolean`);
  return value;
}

function hash(value: unknown, label: string): string {
  if (typeof value !== 'string' || !/^[0-9a-f]{64}$/.test(value)) throw new SnapshotError(`${label}: "hash" is not a SHA-256 hex digest`);
  return value;
}

/** What isoTime writes, and only that: a date that does not exist (February 30) or another spelling of one is refused. */
function timestamp(value: unknown, label: string, field: string): string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value) || !sameInstant(value)) {
    throw new SnapshotError(`${label}: "${field}" is not an ISO 8601 UTC timestamp`);
  }
  return value;
}

function sameInstant(text: string): boolean {
  const ms = Date.parse(text);
  return !Number.isNaN(ms) && new Date(ms).toISOString() === text;
}

function unique(values: string[], problem: string): Set<string> {
  const set = new Set(values);
  if (set.size !== values.length) throw new SnapshotError(problem);
  return set;
}
