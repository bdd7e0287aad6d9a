import { crc32 } from 'node:zlib';
import { KEY_PREFIX } from '../contract/key-format.js';
import { isPlan } from '../contract/plans.js';
import { isoTime } from './clock.js';
import { ID_LENGTH, ID_PREFIX, isId, type IdKind } from './ids.js';
import { ColdKeys, KEY_FIXED, writeKeyRecord } from './snapshot-keys.js';
import { checkName, EXPIRY_BEFORE_CREATION, expiresBeforeCreated, SnapshotError, type KeyFields, type SavedUser, type SavedWorkspace } from './records.js';

/**
 * The state file's formats, read and written here alone: the saved form of the
 * server's state, its parsing and its bytes. Version 1 is one JSON document
 * (ISO timestamps), read to migrate it; version 2, what the server writes, is
 * a compact snapshot (encodeSnapshot) that loads without parsing JSON per key.
 * Key material is the SHA-256 hash only, in either.
 */
export interface Snapshot {
  format: typeof FORMAT;
  version: typeof VERSION;
  users: SavedUser[];
  workspaces: SavedWorkspace[];
  keys: SavedKey[];
}

/** A key as JSON holds it (the version 1 file, journal records): KeyFields with its times as ISO text. */
export type SavedKey = Omit<KeyFields, 'createdAt' | 'expiresAt' | 'lastUsedAt'> & {
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
};

export { SnapshotError, type KeyFields, type SavedUser, type SavedWorkspace };

export const FORMAT = 'svc-local-state';
export const VERSION = 1;

type Obj = Record<string, unknown>;

const utf8 = new TextDecoder('utf-8', { fatal: true });

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
  const { users, workspaces } = parsePeople(root);
  const refs = references(users, workspaces);
  const keys = array(root.keys, 'keys').map((item, i) => parseKey(item, `keys[${i}]`, refs));
  unique(keys.map((k) => k.id), 'two keys share an id');
  unique(keys.map((k) => k.hash), 'two keys share a hash');
  return { format: FORMAT, version: VERSION, users, workspaces, keys };
}

/** The users and workspaces of a document, each checked, and every reference between them. */
function parsePeople(root: Obj): { users: SavedUser[]; workspaces: SavedWorkspace[] } {
  const workspaces = array(root.workspaces, 'workspaces').map((item, i) => parseWorkspace(item, `workspaces[${i}]`));
  const workspaceIds = unique(workspaces.map((w) => w.id), 'two workspaces share an id');
  if (workspaces.length === 0) throw new SnapshotError('there are no workspaces');
  const users = array(root.users, 'users').map((item, i) => parseUser(item, `users[${i}]`, workspaceIds));
  if (users.length === 0) throw new SnapshotError('there are no users');
  if (new Set(users.map((u) => u.id)).size !== users.length) throw new SnapshotError('two users share an id');
  return { users, workspaces };
}

/** What a key's references are checked against. */
export interface References {
  users: { get(id: string): SavedUser | undefined };
  workspaceIds: { has(id: string): boolean };
}

export function references(users: Iterable<SavedUser>, workspaces: Iterable<SavedWorkspace>): References {
  return { users: new Map([...users].map((u) => [u.id, u])), workspaceIds: new Set([...workspaces].map((w) => w.id)) };
}

export function parseWorkspace(item: unknown, where: string): SavedWorkspace {
  const { r, id, label } = record(item, where, 'workspace', WORKSPACE_FIELDS);
  const plan = r.plan;
  if (!isPlan(plan)) throw new SnapshotError(`${label}: "plan" is not a known plan`);
  return { id, name: checkName(r.name, label), plan };
}

export function parseUser(item: unknown, where: string, workspaceIds: { has(id: string): boolean }): SavedUser {
  const { r, id, label } = record(item, where, 'user', USER_FIELDS);
  const memberOf = array(r.workspaceIds, `${label}: "workspaceIds"`).map((w) => {
    if (!isId('workspace', w) || !workspaceIds.has(w)) throw new SnapshotError(`${label}: "workspaceIds" names an unknown workspace`);
    return w;
  });
  unique(memberOf, `${label}: "workspaceIds" names a workspace twice`);
  const active = r.activeWorkspaceId;
  if (!isId('workspace', active) || !memberOf.includes(active)) {
    throw new SnapshotError(`${label}: "activeWorkspaceId" is not one of its workspaces`);
  }
  return { id, name: checkName(r.name, label), activeWorkspaceId: active, workspaceIds: memberOf };
}

export function parseKey(item: unknown, where: string, refs: References): SavedKey {
  const { r, id, label } = record(item, where, 'key', KEY_FIELDS);
  const user = isId('user', r.userId) ? refs.users.get(r.userId) : undefined;
  if (!user) throw new SnapshotError(`${label}: "userId" names an unknown user`);
  const workspaceId = r.workspaceId;
  if (!isId('workspace', workspaceId) || !refs.workspaceIds.has(workspaceId)) throw new SnapshotError(`${label}: "workspaceId" names an unknown workspace`);
  // A key is anchored to a workspace of its user's; any other would let it reach a workspace its user is not in.
  if (!user.workspaceIds.includes(workspaceId)) throw new SnapshotError(`${label}: "workspaceId" is not one of its user's workspaces`);
  if (typeof r.hint !== 'string' || !HINT.test(r.hint)) throw new SnapshotError(`${label}: "hint" is not of the form sk_abcd\u2026wxyz`);
  const key: SavedKey = {
    id,
    userId: user.id,
    workspaceId,
    name: checkName(r.name, label),
    hash: hash(r.hash, label),
    hint: r.hint,
    enabled: boolean(r.enabled, label, 'enabled'),
    createdAt: timestamp(r.createdAt, label, 'createdAt'),
    expiresAt: r.expiresAt === null ? null : timestamp(r.expiresAt, label, 'expiresAt'),
    lastUsedAt: r.lastUsedAt === null ? null : timestamp(r.lastUsedAt, label, 'lastUsedAt'),
  };
  if (expiresBeforeCreated(Date.parse(key.createdAt), key.expiresAt === null ? null : Date.parse(key.expiresAt))) {
    throw new SnapshotError(`${label}: ${EXPIRY_BEFORE_CREATION}`);
  }
  return key;
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

/** A loaded state: the records, and the journal sequence number of the last change it holds (0 for none). */
export interface State {
  seq: number;
  users: SavedUser[];
  workspaces: SavedWorkspace[];
  /** The keys held as objects: all of them, or, with `cold`, those the journal added or replaced. */
  keys: KeyFields[];
  /** The snapshot's keys not yet made objects (snapshot-keys.ts); null when every key is in `keys`. */
  cold: ColdKeys | null;
  /** Header fields this server does not know, written back as they came: the header is open to additions. */
  extra: Record<string, unknown>;
}

export function keyFields(saved: SavedKey): KeyFields {
  return {
    id: saved.id,
    userId: saved.userId,
    workspaceId: saved.workspaceId,
    name: saved.name,
    hash: saved.hash,
    hint: saved.hint,
    enabled: saved.enabled,
    createdAt: Date.parse(saved.createdAt),
    expiresAt: saved.expiresAt === null ? null : Date.parse(saved.expiresAt),
    lastUsedAt: saved.lastUsedAt === null ? null : Date.parse(saved.lastUsedAt),
  };
}

export function savedKey(key: KeyFields): SavedKey {
  return {
    id: key.id,
    userId: key.userId,
    workspaceId: key.workspaceId,
    name: key.name,
    hash: key.hash,
    hint: key.hint,
    enabled: key.enabled,
    createdAt: isoTime(key.createdAt),
    expiresAt: key.expiresAt === null ? null : isoTime(key.expiresAt),
    lastUsedAt: key.lastUsedAt === null ? null : isoTime(key.lastUsedAt),
  };
}

/** A version 1 document as a State: it predates the journal, so it holds no change of it. */
export function stateOf(snapshot: Snapshot): State {
  return { seq: 0, users: snapshot.users, workspaces: snapshot.workspaces, keys: snapshot.keys.map(keyFields), cold: null, extra: {} };
}

/*
 * Version 2, the compact snapshot (docs/contract.md §B, "The data file"):
 *
 *   MAGIC (8 bytes) | u32 header length | header: UTF-8 JSON
 *   | u32 key count | key records | u32 CRC-32 of every byte before it
 *
 * The header is {"format","version":2,"seq","users","workspaces", ...}; a key
 * record (snapshot-keys.ts has its layout) is fixed fields, then the key's
 * name. Fixed widths are what make loading fast: no text is scanned for where
 * a field ends, no timestamp is parsed, and a key can be read from the file's
 * bytes when it is first asked for.
 */
export const SNAPSHOT_VERSION = 2;
const MAGIC = Buffer.from('SVCSNAP\n', 'latin1');
const HEADER_FIELDS = ['format', 'version', 'seq', 'users', 'workspaces'];

export function isCompactSnapshot(bytes: Buffer): boolean {
  return bytes.length >= MAGIC.length && bytes.subarray(0, MAGIC.length).equals(MAGIC);
}

/**
 * What a snapshot holds. `keys` are in the order the store added them,
 * which loading keeps. With `cold`, its keys (by index) are written too,
 * merged with `keys` by that order: a cold key's index is its `added`, and
 * each of `keys` then carries its own.
 */
export interface SnapshotContent {
  seq: number;
  users: SavedUser[];
  workspaces: SavedWorkspace[];
  keys: readonly (KeyFields & { added?: number })[];
  cold?: { keys: ColdKeys; indexes: Uint32Array } | null;
  extra: Record<string, unknown>;
}

/** The state as version 2's bytes, made at once. */
export function encodeSnapshot(content: SnapshotContent): Buffer {
  const steps = encoding(content, pin(content.keys));
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * Keys encoded between two turns of the event loop: a few milliseconds of
 * work. At 100,000 keys the whole snapshot took ~70 ms in one go, during
 * which no request was answered (bench/big-list.mjs).
 */
const KEYS_PER_SLICE = 2_000;

/**
 * The snapshot of the content as it is now, encoded later in slices that
 * yield to the event loop between them, so requests go on being answered
 * while a large store is compacted. Users and workspaces come already
 * copied (Store.snapshotParts); of a key object, only `enabled` and
 * `lastUsedAt` ever change in place (a PATCH, a use, an undo putting them
 * back; every other field is fixed for the object's life), so those two are
 * read here, at once, and the rest as the slices come to it. A cold key
 * never changes: it is copied from the loaded file's bytes as they are.
 */
export function snapshotInSlices(content: SnapshotContent): () => Promise<Buffer> {
  const pinned = pin(content.keys);
  return async () => {
    const steps = encoding(content, pinned);
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  };
}

/** The fields of each key that change in place, as they are at this moment; NaN for a key never used. */
interface Pinned {
  enabled: Uint8Array;
  lastUsedAt: Float64Array;
}

function pin(keys: readonly KeyFields[]): Pinned {
  const enabled = new Uint8Array(keys.length);
  const lastUsedAt = new Float64Array(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    enabled[i] = key.enabled ? 1 : 0;
    lastUsedAt[i] = key.lastUsedAt ?? Number.NaN;
  }
  return { enabled, lastUsedAt };
}

/** The encoder, pausing (yielding) after each slice of keys; a key object's changing fields are read from `pinned`. */
function* encoding(content: SnapshotContent, pinned: Pinned): Generator<void, Buffer, void> {
  const { keys } = content;
  const cold = content.cold ?? null;
  const coldCount = cold ? cold.indexes.length : 0;
  const header = Buffer.from(
    JSON.stringify({ ...content.extra, format: FORMAT, version: SNAPSHOT_VERSION, seq: content.seq, users: content.users, workspaces: content.workspaces }),
  );
  const userPlace = new Map(content.users.map((u, i) => [u.id, i]));
  const workspacePlace = new Map(content.workspaces.map((w, i) => [w.id, i]));
  const places = { user: (id: string) => userPlace.get(id)!, workspace: (id: string) => workspacePlace.get(id)! };
  let size = 0;
  for (let i = 0; i < keys.length; i++) {
    size += KEY_FIXED + Buffer.byteLength(keys[i]!.name);
    if ((i + 1) % KEYS_PER_SLICE === 0) yield;
  }
  for (let c = 0; c < coldCount; c++) size += cold!.keys.recordLength(cold!.indexes[c]!);
  const out = Buffer.allocUnsafe(MAGIC.length + 8 + header.length + size + 4);
  let at = MAGIC.copy(out, 0);
  at = out.writeUInt32LE(header.length, at);
  at += header.copy(out, at);
  at = out.writeUInt32LE(keys.length + coldCount, at);
  // The checksum is carried from slice to slice over what each one wrote.
  let crc = 0;
  let summed = 0;
  let i = 0;
  let c = 0;
  for (let written = 1; i < keys.length || c < coldCount; written++) {
    if (c < coldCount && (i === keys.length || cold!.indexes[c]! < keys[i]!.added!)) {
      at = cold!.keys.copyRecord(cold!.indexes[c++]!, out, at, places);
    } else {
      const key = keys[i]!;
      const place = { user: userPlace.get(key.userId)!, workspace: workspacePlace.get(key.workspaceId)! };
      at = writeKeyRecord(out, at, key, place, pinned.enabled[i] === 1, pinned.lastUsedAt[i]!);
      i++;
    }
    if (written % KEYS_PER_SLICE === 0) {
      crc = crc32(out.subarray(summed, at), crc);
      summed = at;
      yield;
    }
  }
  crc = crc32(out.subarray(summed, at), crc);
  at = out.writeUInt32LE(crc, at);
  return out.subarray(0, at);
}

/**
 * Version 2's bytes as a State whose keys are all cold (snapshot-keys.ts).
 * The checksum says the bytes are as written; every record is still checked
 * as parseSnapshot checks version 1's, since the file may have been made by
 * hand or by a server with another bug.
 */
export function decodeSnapshot(bytes: Buffer): State {
  if (!isCompactSnapshot(bytes) || bytes.length < MAGIC.length + 12) throw new SnapshotError('it is cut short');
  const body = bytes.length - 4;
  if (crc32(bytes.subarray(0, body)) !== bytes.readUInt32LE(body)) throw new SnapshotError('its checksum does not match its content (damaged or cut short)');
  let at = MAGIC.length;
  const headerLength = bytes.readUInt32LE(at);
  at += 4;
  if (at + headerLength + 4 > body) throw new SnapshotError('its header runs past its end');
  let root: Obj;
  try {
    root = object(JSON.parse(utf8.decode(bytes.subarray(at, at + headerLength))), 'the header');
  } catch (error) {
    if (error instanceof SnapshotError) throw error;
    throw new SnapshotError(`its header is not valid JSON (${(error as Error).message})`);
  }
  at += headerLength;
  if (root.format !== FORMAT) throw new SnapshotError(`"format" is not "${FORMAT}"`);
  if (root.version !== SNAPSHOT_VERSION) throw new SnapshotError(`unsupported "version" ${JSON.stringify(root.version)}`);
  const seq = root.seq;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) throw new SnapshotError('"seq" is not a whole number');
  const { users, workspaces } = parsePeople(root);
  const extra = Object.fromEntries(Object.entries(root).filter(([field]) => !HEADER_FIELDS.includes(field)));
  const count = bytes.readUInt32LE(at);
  at += 4;
  // A count the bytes cannot hold is refused before anything is sized by it.
  const room = Math.floor((body - at) / KEY_FIXED);
  if (count > room) throw new SnapshotError(`keys[${room}] runs past the end of the file`);
  const cold = new ColdKeys(bytes, at, body, count, users, workspaces);
  return { seq, users, workspaces, keys: [], cold, extra };
}

/** Every key of a state as an object, in the order the store would add them: what a version 1 document of it holds. */
export function everyKey(state: State): KeyFields[] {
  const { cold } = state;
  if (!cold) return state.keys;
  const keys: KeyFields[] = [];
  const replaced = new Map<number, KeyFields>();
  const added: KeyFields[] = [];
  for (const key of state.keys) {
    const i = cold.findId(key.id);
    if (i === -1) added.push(key);
    else replaced.set(i, key);
  }
  for (let i = 0; i < cold.count; i++) {
    if (cold.has(i)) keys.push(cold.peek(i));
    else if (replaced.has(i)) keys.push(replaced.get(i)!);
  }
  return [...keys, ...added];
}
