import { crc32 } from 'node:zlib';
import {
  keyFields,
  parseKey,
  parseUser,
  parseWorkspace,
  SnapshotError,
  type KeyFields,
  type SavedKey,
  type SavedUser,
  type SavedWorkspace,
  type State,
} from './snapshot.js';
import type { ColdKeys } from './snapshot-keys.js';

/**
 * The journal: the changes made since the snapshot, appended one record per
 * save (docs/contract.md §B, "The data file"). A record is framed as
 *
 *   u32 payload length | u32 CRC-32 of the payload | payload
 *
 * (little-endian), the payload being UTF-8 JSON `{"seq","ops"}`. Each record
 * carries whole records (a key as it now is, or its removal), not deltas, and
 * a sequence number one above the one before; the snapshot names the last
 * one it holds, so a record already in it is skipped on replay, and a crash
 * between writing a snapshot and removing the journal it replaces loses and
 * repeats nothing.
 */
export type Op = { reset: true } | { workspace: SavedWorkspace } | { user: SavedUser } | { key: SavedKey } | { revoke: string };

const FRAME = 8;

export function encodeEntry(seq: number, ops: Op[]): Buffer {
  const payload = Buffer.from(JSON.stringify({ seq, ops }));
  const out = Buffer.allocUnsafe(FRAME + payload.length);
  out.writeUInt32LE(payload.length, 0);
  out.writeUInt32LE(crc32(payload), 4);
  payload.copy(out, FRAME);
  return out;
}

export interface Scan {
  /** The payloads of the whole, intact records, in order. */
  payloads: Buffer[];
  /** The bytes those records take: where a torn or damaged record begins, else the file's length. */
  end: number;
  /** What stopped the scan before the end, or null. */
  problem: string | null;
  /** Whether the problem is a record cut short at the very end, as a crash during an append leaves it. */
  torn: boolean;
}

/** Reads records until the end or the first torn or damaged one, as SQLite's WAL and Redis's AOF are read. */
export function scanJournal(bytes: Buffer): Scan {
  const payloads: Buffer[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (bytes.length - at < FRAME) return { payloads, end: at, problem: `a record at byte ${at} is cut short`, torn: true };
    const length = bytes.readUInt32LE(at);
    if (bytes.length - at - FRAME < length) return { payloads, end: at, problem: `a record at byte ${at} is cut short`, torn: true };
    const payload = bytes.subarray(at + FRAME, at + FRAME + length);
    if (crc32(payload) !== bytes.readUInt32LE(at + 4)) return { payloads, end: at, problem: `the record at byte ${at} fails its checksum`, torn: false };
    payloads.push(payload);
    at += FRAME + length;
  }
  return { payloads, end: at, problem: null, torn: false };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A record's sequence number and operations; throws a SnapshotError when its payload is not one the server writes. */
export function parseEntry(payload: Buffer): { seq: number; ops: unknown[] } {
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(payload));
  } catch (error) {
    throw new SnapshotError(`a record is not valid JSON (${(error as Error).message})`);
  }
  const entry = value as { seq?: unknown; ops?: unknown };
  if (typeof entry !== 'object' || entry === null || !Number.isSafeInteger(entry.seq) || !Array.isArray(entry.ops)) {
    throw new SnapshotError('a record is not {"seq","ops"}');
  }
  return { seq: entry.seq as number, ops: entry.ops };
}

/**
 * Applies records to a loaded state, each checked as the snapshot's records
 * are. Records at or below the state's sequence number are already in it;
 * the others must follow on without a gap.
 */
export class Replay {
  /**
   * The records by id, made at the first record applied: a start with an
   * empty journal, the usual one, never indexes the snapshot's keys twice
   * (the store indexes them once more as it loads).
   */
  private maps: { workspaces: Map<string, SavedWorkspace>; users: Map<string, SavedUser>; keys: Map<string, KeyFields> } | null = null;
  private seq: number;
  private touchedKeys = false;
  /** The snapshot's keys not yet made objects, less those a record replaced or revoked; null after a reset. */
  private cold: ColdKeys | null;

  constructor(private readonly base: State) {
    this.seq = base.seq;
    this.cold = base.cold;
  }

  get lastSeq(): number {
    return this.seq;
  }

  /** What a record with this number is: the next one, one already applied (in the snapshot, or twice), or one after a gap. */
  place(seq: number): 'next' | 'applied' | 'gap' {
    if (seq <= this.seq) return 'applied';
    return seq === this.seq + 1 ? 'next' : 'gap';
  }

  apply(seq: number, ops: unknown[]): void {
    const where = `change ${seq}`;
    const maps = (this.maps ??= {
      workspaces: new Map(this.base.workspaces.map((w) => [w.id, w])),
      users: new Map(this.base.users.map((u) => [u.id, u])),
      keys: new Map(this.base.keys.map((k) => [k.id, k])),
    });
    const refs = { users: maps.users, workspaceIds: maps.workspaces };
    for (const op of ops) {
      if (typeof op !== 'object' || op === null || Array.isArray(op)) throw new SnapshotError(`${where}: an operation is not an object`);
      const o = op as Record<string, unknown>;
      if (o.reset === true) {
        this.cold = null;
        maps.workspaces.clear();
        maps.users.clear();
        maps.keys.clear();
      } else if ('workspace' in o) {
        const w = parseWorkspace(o.workspace, where);
        maps.workspaces.set(w.id, w);
      } else if ('user' in o) {
        const u = parseUser(o.user, where, maps.workspaces);
        maps.users.set(u.id, u);
      } else if ('key' in o) {
        const k = keyFields(parseKey(o.key, where, refs));
        this.dropCold(k.id);
        maps.keys.set(k.id, k);
        this.touchedKeys = true;
      } else if (typeof o.revoke === 'string') {
        this.dropCold(o.revoke);
        maps.keys.delete(o.revoke);
      } else {
        throw new SnapshotError(`${where}: an operation the journal does not have`);
      }
    }
    this.seq = seq;
  }

  state(): State {
    const maps = this.maps;
    if (maps === null) return this.base;
    if (maps.users.size === 0) throw new SnapshotError('after the journal there are no users');
    const keys = [...maps.keys.values()];
    const { cold } = this;
    if (this.touchedKeys && (new Set(keys.map((k) => k.hash)).size !== keys.length || (cold && keys.some((k) => cold.has(cold.findHash(k.hash)))))) {
      throw new SnapshotError('after the journal two keys share a hash');
    }
    return { seq: this.seq, users: [...maps.users.values()], workspaces: [...maps.workspaces.values()], keys, cold, extra: this.base.extra };
  }

  /** A record replaces or revokes this key: a cold copy of it is no longer the key. */
  private dropCold(id: string): void {
    const i = this.cold?.findId(id) ?? -1;
    if (i !== -1) this.cold!.drop(i);
  }
}
