import { randomBytes } from 'node:crypto';
import { KEY_PREFIX } from '../contract/key-format.js';
import { ID_ALPHABET, ID_LENGTH, ID_PREFIX } from './ids.js';
import { checkName, EXPIRY_BEFORE_CREATION, expiresBeforeCreated, SnapshotError, type KeyFields, type SavedUser, type SavedWorkspace } from './records.js';

/**
 * The key records of a version 2 snapshot (snapshot.ts has the whole
 * format): their layout, writing one, and ColdKeys, which checks and indexes
 * every record of a loaded file but makes a key's object only when the key
 * is first asked for.
 *
 * A record is its id (24 bytes, `key_` and 20 symbols), its user's and
 * workspace's places in the header's lists (u32 each), the 32 bytes of its
 * hash, the hint's 8 symbols, a flags byte (enabled, has expiresAt, has
 * lastUsedAt), createdAt, expiresAt and lastUsedAt as float64 milliseconds,
 * then its name: u16 byte length and UTF-8. Integers are little-endian.
 */
const ID_BYTES = ID_PREFIX.key.length + ID_LENGTH;
const USER_AT = ID_BYTES;
const WORKSPACE_AT = USER_AT + 4;
const HASH_AT = WORKSPACE_AT + 4;
const HINT_AT = HASH_AT + 32;
const FLAGS_AT = HINT_AT + 8;
const TIMES_AT = FLAGS_AT + 1;
const NAME_LENGTH_AT = TIMES_AT + 3 * 8;
/** The bytes of a record before its name. */
export const KEY_FIXED = NAME_LENGTH_AT + 2;
const ENABLED = 1;
const EXPIRES = 2;
const USED = 4;
/** The span isoTime writes with a four-digit year: years 0000 to 9999. */
const EARLIEST = Date.parse('0000-01-01T00:00:00.000Z');
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const KEY_ID_PREFIX = Buffer.from(ID_PREFIX.key, 'latin1');
const KEY_ID = new RegExp(`^${ID_PREFIX.key}[${ID_ALPHABET}]{${ID_LENGTH}}$`);
const ID_WORDS = ID_LENGTH / 4;
const HASH_WORDS = 8;

/** A key as the store holds it: `added` is the order it came into memory in (store.ts, StoredKey). */
export type AddedKey = KeyFields & { added: number };

/** Writes one key's record at `at`; returns where the next begins. `enabled` and `used` (NaN for never) are passed, as they change in place. */
export function writeKeyRecord(out: Buffer, at: number, key: KeyFields, places: { user: number; workspace: number }, enabled: boolean, used: number): number {
  out.write(key.id, at, ID_BYTES, 'latin1');
  out.writeUInt32LE(places.user, at + USER_AT);
  out.writeUInt32LE(places.workspace, at + WORKSPACE_AT);
  out.write(key.hash, at + HASH_AT, 32, 'hex');
  out.write(key.hint.slice(KEY_PREFIX.length, KEY_PREFIX.length + 4) + key.hint.slice(-4), at + HINT_AT, 8, 'latin1');
  out[at + FLAGS_AT] = (enabled ? ENABLED : 0) | (key.expiresAt === null ? 0 : EXPIRES) | (Number.isNaN(used) ? 0 : USED);
  out.writeDoubleLE(key.createdAt, at + TIMES_AT);
  out.writeDoubleLE(key.expiresAt ?? 0, at + TIMES_AT + 8);
  out.writeDoubleLE(Number.isNaN(used) ? 0 : used, at + TIMES_AT + 16);
  const length = out.write(key.name, at + KEY_FIXED, 'utf8');
  out.writeUInt16LE(length, at + NAME_LENGTH_AT);
  return at + KEY_FIXED + length;
}

/** Buffer's own slicing, without the encoding lookup of toString. */
interface Slicing {
  latin1Slice(start: number, end: number): string;
  hexSlice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
}

/**
 * The keys of a loaded snapshot that nothing has asked for yet. Loading
 * checks every record as parseSnapshot checks version 1's and indexes them
 * all by id, by hash and by user, in typed arrays over the file's own bytes:
 * no string and no object per key, so a start with 100,000 keys costs a
 * pass over the bytes rather than 100,000 objects to make and index. A key
 * leaves on first use (`take`), becoming an object the store holds from
 * then on, or is dropped (`drop`) when the journal replaced or revoked it;
 * it never comes back. The bytes are never written to: what a cold key
 * holds is what the file held.
 */
export class ColdKeys {
  /** Each record's offset in `bytes`, by index (the order of the file). */
  private readonly at: Uint32Array;
  private readonly gone: Uint8Array;
  /** Open addressing by hash and by id, in pairs of index + 1 and tag (indexRecords). */
  private readonly byHash: Int32Array;
  private readonly byId: Int32Array;
  /** Each user's record indexes, in file order: userKeys[userStart[u]] up to userKeys[userStart[u + 1]]. */
  private readonly userStart: Uint32Array;
  private readonly userKeys: Uint32Array;
  private readonly userPlace: Map<string, number>;
  /** How many of each user's keys are still cold, by user place. */
  private readonly userLive: Uint32Array;
  private live: number;
  /**
   * The tables' hash key, new for each load: slots then depend on bytes
   * and a secret, so a file made to put every key in one run of slots (and
   * make loading quadratic) cannot be made without knowing it.
   */
  private readonly seeds = ((r) => [r.readInt32LE(0), r.readInt32LE(4)])(randomBytes(8));

  /**
   * Reads `count` records starting at `from`, which must end exactly at
   * `end`; throws a SnapshotError naming the first bad record, or two keys
   * sharing an id or a hash.
   */
  constructor(
    private readonly bytes: Buffer,
    from: number,
    end: number,
    readonly count: number,
    private readonly users: readonly SavedUser[],
    private readonly workspaces: readonly SavedWorkspace[],
  ) {
    this.at = new Uint32Array(count);
    this.gone = new Uint8Array(count);
    const slots = tableSize(count);
    this.byHash = new Int32Array(2 * slots);
    this.byId = new Int32Array(2 * slots);
    this.userPlace = new Map(users.map((u, i) => [u.id, i]));
    const userOf = readRecords(bytes, from, end, this.at, users, workspaces);
    indexRecords(bytes, this.at, this.byId, { offset: KEY_ID_PREFIX.length, words: ID_WORDS, seeds: this.seeds, what: 'an id' });
    indexRecords(bytes, this.at, this.byHash, { offset: HASH_AT, words: HASH_WORDS, seeds: this.seeds, what: 'a hash' });
    const perUser = new Uint32Array(users.length + 1);
    for (let i = 0; i < count; i++) perUser[userOf[i]! + 1]!++;
    for (let u = 0; u < users.length; u++) perUser[u + 1]! += perUser[u]!;
    this.userStart = perUser.slice();
    this.userLive = new Uint32Array(users.length);
    for (let u = 0; u < users.length; u++) this.userLive[u] = perUser[u + 1]! - perUser[u]!;
    this.userKeys = new Uint32Array(count);
    for (let i = 0; i < count; i++) this.userKeys[perUser[userOf[i]!]!++] = i;
    this.live = count;
  }

  /** How many keys are still cold. */
  get size(): number {
    return this.live;
  }

  /** Whether the key at this index is still cold; false for -1, what the finders answer for none. */
  has(i: number): boolean {
    return this.gone[i] === 0;
  }

  /** The index of the key of this id, cold or gone; -1 when the file had none. */
  findId(id: string): number {
    if (!KEY_ID.test(id)) return -1;
    const probe = Buffer.from(id, 'latin1');
    return this.find(this.byId, mix(probe, KEY_ID_PREFIX.length, ID_WORDS, this.seeds), (at) => this.bytes.compare(probe, 0, ID_BYTES, at, at + ID_BYTES) === 0);
  }

  /** The index of the key with this SHA-256 digest (64 hex digits), cold or gone; -1 when the file had none. */
  findHash(hex: string): number {
    const digest = Buffer.from(hex, 'hex');
    if (digest.length !== 32) return -1;
    return this.find(this.byHash, mix(digest, 0, HASH_WORDS, this.seeds), (at) => this.bytes.compare(digest, 0, 32, at + HASH_AT, at + HASH_AT + 32) === 0);
  }

  private find(table: Int32Array, h: number, same: (at: number) => boolean): number {
    const mask = table.length / 2 - 1;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const entry = table[2 * slot]!;
      if (entry === 0) return -1;
      if (table[2 * slot + 1] === h && same(this.at[entry - 1]!)) return entry - 1;
    }
  }

  /** The cold keys of a user (by id), in file order. */
  ofUser(userId: string): number[] {
    const u = this.userPlace.get(userId);
    const found: number[] = [];
    if (u === undefined || this.userLive[u] === 0) return found;
    for (let k = this.userStart[u]!; k < this.userStart[u + 1]!; k++) {
      const i = this.userKeys[k]!;
      if (this.gone[i] === 0) found.push(i);
    }
    return found;
  }

  /** Every cold key's index, in file order. */
  indexes(): Uint32Array {
    const out = new Uint32Array(this.live);
    let n = 0;
    for (let i = 0; i < this.count; i++) if (this.gone[i] === 0) out[n++] = i;
    return out;
  }

  /** The key at this index as an object, which is the store's from now on; `added` is the index. */
  take(i: number): AddedKey {
    if (this.gone[i] !== 0) throw new Error(`cold key ${i} was already taken`);
    this.drop(i);
    return this.peek(i);
  }

  /** The key at this index as a new object, leaving it cold. */
  peek(i: number): AddedKey {
    const raw = this.bytes as Buffer & Slicing;
    const at = this.at[i]!;
    const flags = this.bytes[at + FLAGS_AT]!;
    const hint = raw.latin1Slice(at + HINT_AT, at + HINT_AT + 8);
    const nameLength = this.bytes.readUInt16LE(at + NAME_LENGTH_AT);
    return {
      id: raw.latin1Slice(at, at + ID_BYTES),
      userId: this.users[this.bytes.readUInt32LE(at + USER_AT)]!.id,
      workspaceId: this.workspaces[this.bytes.readUInt32LE(at + WORKSPACE_AT)]!.id,
      name: raw.utf8Slice(at + KEY_FIXED, at + KEY_FIXED + nameLength),
      hash: raw.hexSlice(at + HASH_AT, at + HASH_AT + 32),
      hint: `${KEY_PREFIX}${hint.slice(0, 4)}\u2026${hint.slice(4)}`,
      enabled: (flags & ENABLED) !== 0,
      createdAt: this.bytes.readDoubleLE(at + TIMES_AT),
      expiresAt: flags & EXPIRES ? this.bytes.readDoubleLE(at + TIMES_AT + 8) : null,
      lastUsedAt: flags & USED ? this.bytes.readDoubleLE(at + TIMES_AT + 16) : null,
      added: i,
    };
  }

  /** Forgets the key at this index: the journal replaced or revoked it, or it was taken. */
  drop(i: number): void {
    if (this.gone[i] !== 0) return;
    this.gone[i] = 1;
    this.live--;
    this.userLive[this.bytes.readUInt32LE(this.at[i]! + USER_AT)]!--;
  }

  /**
   * Copies the record at this index to `out` at `at`, with its user's and
   * workspace's places in the new header; returns where the next begins.
   * What it copies is the key as loaded: call it only for a key that was
   * cold when the copy was decided on, as a key never changes while cold.
   */
  copyRecord(i: number, out: Buffer, at: number, places: { user(id: string): number; workspace(id: string): number }): number {
    const from = this.at[i]!;
    const end = from + this.recordLength(i);
    this.bytes.copy(out, at, from, end);
    out.writeUInt32LE(places.user(this.users[this.bytes.readUInt32LE(from + USER_AT)]!.id), at + USER_AT);
    out.writeUInt32LE(places.workspace(this.workspaces[this.bytes.readUInt32LE(from + WORKSPACE_AT)]!.id), at + WORKSPACE_AT);
    return at + end - from;
  }

  /** The bytes of the record at this index. */
  recordLength(i: number): number {
    return KEY_FIXED + this.bytes.readUInt16LE(this.at[i]! + NAME_LENGTH_AT);
  }
}

/** A power of two at least twice `count`: probes stay short at half full. */
function tableSize(count: number): number {
  let size = 16;
  while (size < count * 2) size *= 2;
  return size;
}

/** Byte classes, by byte value: what a key id's symbols, a hint's and a plain name's bytes may be. */
const ID_SYMBOL = byteClass(/[0-9a-z]/);
const HINT_SYMBOL = byteClass(/[A-Za-z0-9]/);
const PRINTABLE = byteClass(/[\x20-\x7e]/);

function byteClass(pattern: RegExp): Uint8Array {
  const table = new Uint8Array(256);
  for (let c = 0; c < 128; c++) table[c] = pattern.test(String.fromCharCode(c)) ? 1 : 0;
  return table;
}

/**
 * Checks every record from `from` to `end`, as parseSnapshot checks version
 * 1's, and notes where each begins in `at`; returns each one's user place.
 * Throws a SnapshotError naming the first bad record. One flat loop over
 * locals and byte tables: it runs once per key on every start.
 */
function readRecords(bytes: Buffer, from: number, end: number, at: Uint32Array, users: readonly SavedUser[], workspaces: readonly SavedWorkspace[]): Uint32Array {
  const count = at.length;
  const workspacePlace = new Map(workspaces.map((w, i) => [w.id, i]));
  const memberOf = users.map((u) => new Set(u.workspaceIds.map((id) => workspacePlace.get(id))));
  const userOf = new Uint32Array(count);
  const problem = (i: number, p: number, what: string, separator = ': ') => new SnapshotError(`${keyLabel(bytes, i, p)}${separator}${what}`);
  let p = from;
  for (let i = 0; i < count; i++) {
    if (p + KEY_FIXED > end) throw new SnapshotError(`keys[${i}] runs past the end of the file`);
    let ok = bytes[p] === KEY_ID_PREFIX[0] && bytes[p + 1] === KEY_ID_PREFIX[1] && bytes[p + 2] === KEY_ID_PREFIX[2] && bytes[p + 3] === KEY_ID_PREFIX[3];
    for (let k = p + KEY_ID_PREFIX.length; ok && k < p + ID_BYTES; k++) ok = ID_SYMBOL[bytes[k]!] === 1;
    if (!ok) throw new SnapshotError(`keys[${i}]: "id" is not a key id as the server makes them (${ID_PREFIX.key} and ${ID_LENGTH} of 0-9, a-z)`);
    const user = bytes.readUInt32LE(p + USER_AT);
    const workspace = bytes.readUInt32LE(p + WORKSPACE_AT);
    if (user >= users.length) throw problem(i, p, '"userId" names an unknown user');
    if (workspace >= workspaces.length) throw problem(i, p, '"workspaceId" names an unknown workspace');
    if (!memberOf[user]!.has(workspace)) throw problem(i, p, '"workspaceId" is not one of its user\'s workspaces');
    for (let k = p + HINT_AT; k < p + HINT_AT + 8; k++) if (HINT_SYMBOL[bytes[k]!] !== 1) throw problem(i, p, '"hint" is not of the form sk_abcd\u2026wxyz');
    const flags = bytes[p + FLAGS_AT]!;
    // What the server never writes is refused, as version 1's unknown fields are: a cold record is copied as it is into the next snapshot.
    if (flags & ~(ENABLED | EXPIRES | USED)) throw problem(i, p, 'its flags byte has a bit the format does not have');
    if (!isStamp(bytes.readDoubleLE(p + TIMES_AT))) throw problem(i, p, '"createdAt" is not a time the server could have stamped');
    checkOptionalTime(bytes, p, TIMES_AT + 8, (flags & EXPIRES) !== 0, () => problem(i, p, '"expiresAt" is not a time the server could have stamped'));
    if (flags & EXPIRES && expiresBeforeCreated(bytes.readDoubleLE(p + TIMES_AT), bytes.readDoubleLE(p + TIMES_AT + 8))) throw problem(i, p, EXPIRY_BEFORE_CREATION);
    checkOptionalTime(bytes, p, TIMES_AT + 16, (flags & USED) !== 0, () => problem(i, p, '"lastUsedAt" is not a time the server could have stamped'));
    const nameLength = bytes.readUInt16LE(p + NAME_LENGTH_AT);
    const nameAt = p + KEY_FIXED;
    const nameEnd = nameAt + nameLength;
    if (nameEnd > end) throw problem(i, p, 'runs past the end of the file', ' ');
    // A name nameProblem passes without a look: printable ASCII, 1 to 100 of them, not starting or ending with a space.
    let plain = nameLength >= 1 && nameLength <= 100 && bytes[nameAt] !== 0x20 && bytes[nameEnd - 1] !== 0x20;
    for (let k = nameAt; plain && k < nameEnd; k++) plain = PRINTABLE[bytes[k]!] === 1;
    if (!plain) checkOtherName(bytes, i, p, nameAt, nameEnd);
    at[i] = p;
    userOf[i] = user;
    p = nameEnd;
  }
  if (p !== end) throw new SnapshotError('it has bytes after its last key');
  return userOf;
}

/** A time the flags say is there must be a stamp; one they say is absent is written as zero bytes. */
function checkOptionalTime(bytes: Buffer, p: number, offset: number, present: boolean, problem: () => SnapshotError): void {
  if (present ? !isStamp(bytes.readDoubleLE(p + offset)) : bytes.readUInt32LE(p + offset) !== 0 || bytes.readUInt32LE(p + offset + 4) !== 0) throw problem();
}

/** A whole number of milliseconds within the years isoTime writes (not -0, which no clock gives). */
function isStamp(value: number): boolean {
  return Number.isInteger(value) && value >= EARLIEST && value <= LATEST && !Object.is(value, -0);
}

/** A name that is not plain ASCII: it must be UTF-8, and then what the API would have taken. */
function checkOtherName(bytes: Buffer, i: number, p: number, from: number, to: number): void {
  const name = (bytes as Buffer & Slicing).utf8Slice(from, to);
  // Replacement characters come from bytes that are not UTF-8, unless they were written as such.
  if (name.includes('\uFFFD') && !Buffer.from(name).equals(bytes.subarray(from, to))) throw new SnapshotError(`${keyLabel(bytes, i, p)}: "name" is not UTF-8`);
  checkName(name, keyLabel(bytes, i, p));
}

/** A key named in a message by its place and id, as parseSnapshot names it. */
function keyLabel(bytes: Buffer, i: number, p: number): string {
  return `keys[${i}] (${(bytes as Buffer & Slicing).latin1Slice(p, p + ID_BYTES)})`;
}

/**
 * Puts every record in an open-addressing table by `words` 32-bit words at
 * `offset` in it (an id's 20 symbols, a hash's 32 bytes); the same words in
 * two records are a duplicate, named by both records. Each slot is a pair:
 * the record's index + 1 (0 for empty) and the seeded hash of its words,
 * which tells most collisions apart without reading the file.
 */
function indexRecords(bytes: Buffer, at: Uint32Array, table: Int32Array, key: { offset: number; words: number; seeds: readonly number[]; what: string }): void {
  const mask = table.length / 2 - 1;
  const length = key.words * 4;
  for (let i = 0; i < at.length; i++) {
    const p = at[i]! + key.offset;
    const h = mix(bytes, p, key.words, key.seeds);
    let slot = h & mask;
    for (;;) {
      const entry = table[2 * slot]!;
      if (entry === 0) break;
      const q = at[entry - 1]! + key.offset;
      if (table[2 * slot + 1] === h && bytes.compare(bytes, p, p + length, q, q + length) === 0) {
        throw new SnapshotError(`two keys share ${key.what}: ${keyLabel(bytes, entry - 1, at[entry - 1]!)} and ${keyLabel(bytes, i, at[i]!)}`);
      }
      slot = (slot + 1) & mask;
    }
    table[2 * slot] = i + 1;
    table[2 * slot + 1] = h;
  }
}

/**
 * A keyed 32-bit hash of `words` little-endian words at `at`: HalfSipHash's
 * add-rotate-xor rounds (one per word, three to finish), keyed by the two
 * seeds. A plain multiply-and-xor hash has differences in its input that
 * give the same output whatever the seed (flip a word's top bit, undo it in
 * the next word): a file made of them loaded quadratically anyway. These
 * rounds have no such shortcut known, as hash tables keyed against flooding
 * rely on.
 */
function mix(bytes: Buffer, at: number, words: number, seeds: readonly number[]): number {
  let v0 = seeds[0]! | 0;
  let v1 = seeds[1]! | 0;
  let v2 = 0x6c796765 ^ v0;
  let v3 = 0x74656462 ^ v1;
  // One round per word, one for the length, three to finish; written once, as a call per round costs more than the round.
  for (let k = 0; k < words + 4; k++) {
    const m = k < words ? bytes.readInt32LE(at + 4 * k) : k === words ? (words * 4) << 24 : 0;
    if (k === words + 1) v2 ^= 0xff;
    v3 ^= m;
    v0 = (v0 + v1) | 0;
    v1 = ((v1 << 5) | (v1 >>> 27)) ^ v0;
    v0 = (v0 << 16) | (v0 >>> 16);
    v2 = (v2 + v3) | 0;
    v3 = ((v3 << 8) | (v3 >>> 24)) ^ v2;
    v0 = (v0 + v3) | 0;
    v3 = ((v3 << 7) | (v3 >>> 25)) ^ v0;
    v2 = (v2 + v1) | 0;
    v1 = ((v1 << 13) | (v1 >>> 19)) ^ v2;
    v2 = (v2 << 16) | (v2 >>> 16);
    v0 ^= m;
  }
  return v1 ^ v3;
}
