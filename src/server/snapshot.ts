import { isPlan, type Plan } from '../contract/plans.js';
import { KEY_ID_PATTERN } from '../contract/paths.js';

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

/** Checks every field and cross-reference, so a damaged file is refused whole rather than half-loaded. */
export function parseSnapshot(value: unknown): Snapshot {
  const root = object(value, 'the document');
  if (root.format !== FORMAT) throw new SnapshotError(`"format" is not "${FORMAT}"`);
  if (root.version !== VERSION) throw new SnapshotError(`unsupported "version" ${JSON.stringify(root.version)}`);

  const workspaces = array(root.workspaces, 'workspaces').map((item, i): SavedWorkspace => {
    const w = object(item, `workspaces[${i}]`);
    const plan = w.plan;
    if (!isPlan(plan)) throw new SnapshotError(`workspaces[${i}].plan is not a known plan`);
    return { id: id(w.id, `workspaces[${i}].id`), name: string(w.name, `workspaces[${i}].name`), plan };
  });
  const workspaceIds = unique(workspaces.map((w) => w.id), 'two workspaces share an id');
  if (workspaces.length === 0) throw new SnapshotError('there are no workspaces');

  const users = array(root.users, 'users').map((item, i): SavedUser => {
    const u = object(item, `users[${i}]`);
    const user = {
      id: id(u.id, `users[${i}].id`),
      name: string(u.name, `users[${i}].name`),
      activeWorkspaceId: id(u.activeWorkspaceId, `users[${i}].activeWorkspaceId`),
      workspaceIds: array(u.workspaceIds, `users[${i}].workspaceIds`).map((w, j) => id(w, `users[${i}].workspaceIds[${j}]`)),
    };
    for (const w of user.workspaceIds) {
      if (!workspaceIds.has(w)) throw new SnapshotError(`users[${i}] is a member of unknown workspace ${w}`);
    }
    if (!user.workspaceIds.includes(user.activeWorkspaceId)) {
      throw new SnapshotError(`users[${i}].activeWorkspaceId is not one of its workspaces`);
    }
    return user;
  });
  if (users.length === 0) throw new SnapshotError('there are no users');
  const userIds = unique(users.map((u) => u.id), 'two users share an id');

  const keys = array(root.keys, 'keys').map((item, i): SavedKey => {
    const k = object(item, `keys[${i}]`);
    const at = (field: string) => `keys[${i}].${field}`;
    const key: SavedKey = {
      id: id(k.id, at('id')),
      userId: id(k.userId, at('userId')),
      workspaceId: id(k.workspaceId, at('workspaceId')),
      name: string(k.name, at('name')),
      hash: hash(k.hash, at('hash')),
      hint: string(k.hint, at('hint')),
      enabled: boolean(k.enabled, at('enabled')),
      createdAt: timestamp(k.createdAt, at('createdAt')),
      expiresAt: k.expiresAt === null ? null : timestamp(k.expiresAt, at('expiresAt')),
      lastUsedAt: k.lastUsedAt === null ? null : timestamp(k.lastUsedAt, at('lastUsedAt')),
    };
    if (!userIds.has(key.userId)) throw new SnapshotError(`${at('userId')} names an unknown user`);
    if (!workspaceIds.has(key.workspaceId)) throw new SnapshotError(`${at('workspaceId')} names an unknown workspace`);
    return key;
  });
  unique(keys.map((k) => k.id), 'two keys share an id');
  unique(keys.map((k) => k.hash), 'two keys share a hash');

  return { format: FORMAT, version: VERSION, users, workspaces, keys };
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

function string(value: unknown, where: string): string {
  if (typeof value !== 'string') throw new SnapshotError(`${where} is not a string`);
  return value;
}

function boolean(value: unknown, where: string): boolean {
  if (typeof value !== 'boolean') throw new SnapshotError(`${where} is not a boolean`);
  return value;
}

function id(value: unknown, where: string): string {
  if (typeof value !== 'string' || !KEY_ID_PATTERN.test(value)) throw new SnapshotError(`${where} is not a valid id`);
  return value;
}

function hash(value: unknown, where: string): string {
  if (typeof value !== 'string' || !/^[0-9a-f]{64}$/.test(value)) throw new SnapshotError(`${where} is not a SHA-256 hex digest`);
  return value;
}

function timestamp(value: unknown, where: string): string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value) || Number.isNaN(Date.parse(value))) {
    throw new SnapshotError(`${where} is not an ISO 8601 UTC timestamp`);
  }
  return value;
}

function unique(values: string[], problem: string): Set<string> {
  const set = new Set(values);
  if (set.size !== values.length) throw new SnapshotError(problem);
  return set;
}
