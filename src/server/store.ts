import { randomBytes } from 'node:crypto';
import { keyHint } from '../contract/key-format.js';
import { generateKey, randomString } from '../contract/key-generation.js';
import { REQUESTS_PER_MINUTE, type Plan } from '../contract/plans.js';
import type { CreatedKey, KeyRecord, User, Workspace } from '../contract/types.js';
import { isoTime, type Clock } from './clock.js';
import { ID_ALPHABET, ID_LENGTH, ID_PREFIX } from './ids.js';
import { hashKey } from './key-hash.js';
import { encodeRecord, encodeState, FORMAT, KEY_FIELDS, VERSION, type SavedKey, type SavedUser, type Snapshot } from './snapshot.js';

export interface UserState {
  id: string;
  name: string;
  activeWorkspaceId: string;
  workspaceIds: string[];
}

export interface WorkspaceState {
  id: string;
  name: string;
  plan: Plan;
}

/** A key as the server holds it: the hash of the secret, never the secret. */
export interface StoredKey {
  id: string;
  userId: string;
  workspaceId: string;
  name: string;
  hash: string;
  hint: string;
  enabled: boolean;
  createdAt: number;
  expiresAt: number | null;
  lastUsedAt: number | null;
}


/** A key's place in its user's list: what a page cursor names (docs/contract.md §A5). */
export interface KeyPlace {
  createdAt: number;
  /** The order the key was added to this server's memory in; meaningless to another process. */
  added: number;
}

export class Store {
  private readonly users = new Map<string, UserState>();
  private readonly workspaces = new Map<string, WorkspaceState>();
  private readonly keys = new Map<string, StoredKey>();
  private readonly keysByHash = new Map<string, StoredKey>();
  /**
   * Each user's keys oldest first, by creation time and then by the order
   * they were added: a page of the newest-first list is a binary search and
   * a slice, never a sort of every key on every request.
   */
  private readonly keysByUser = new Map<string, StoredKey[]>();
  /** The order keys were added in, telling apart keys created in the same millisecond; kept off StoredKey, which is saved field by field. */
  private readonly addedAt = new WeakMap<StoredKey, number>();
  private added = 0;
  /** Each key's line in the state file, with the field values it was made from (see stateFileParts). */
  private readonly savedLines = new WeakMap<StoredKey, { fields: StoredKey; line: Buffer }>();
  /** Bumped by every change, lastUsedAt included, so persistence can tell when state is unsaved. */
  version = 0;

  constructor(
    private readonly clock: Clock,
    private readonly random: (size: number) => Buffer = randomBytes,
  ) {}

  static fromSnapshot(snapshot: Snapshot, clock: Clock): Store {
    const store = new Store(clock);
    store.restore(snapshot);
    return store;
  }

  /**
   * Makes the state the one in `snapshot`, in place: app and handlers hold
   * this store, and requests in flight hold its records, so a record that
   * exists in both keeps its identity and only its fields change. Used after
   * a failed save, to go back to what the file holds. A surviving key keeps
   * the lastUsedAt it has in memory: that is saved lazily, and its use did happen.
   */
  restore(snapshot: Snapshot): void {
    const workspaces = new Map(this.workspaces);
    const users = new Map(this.users);
    const keys = new Map(this.keys);
    this.workspaces.clear();
    this.users.clear();
    this.keys.clear();
    this.keysByHash.clear();
    this.keysByUser.clear();
    for (const w of snapshot.workspaces) {
      this.workspaces.set(w.id, Object.assign(workspaces.get(w.id) ?? ({} as WorkspaceState), w));
    }
    for (const u of snapshot.users) {
      const user = Object.assign(users.get(u.id) ?? ({} as UserState), u, { workspaceIds: [...u.workspaceIds] });
      this.users.set(u.id, user);
      this.keysByUser.set(u.id, []);
    }
    for (const k of snapshot.keys) {
      const live = keys.get(k.id);
      // One literal with every field, as createKey makes them: keys of one shape keep the save loop fast.
      const key: StoredKey = {
        id: k.id,
        userId: k.userId,
        workspaceId: k.workspaceId,
        name: k.name,
        hash: k.hash,
        hint: k.hint,
        enabled: k.enabled,
        createdAt: Date.parse(k.createdAt),
        expiresAt: k.expiresAt === null ? null : Date.parse(k.expiresAt),
        lastUsedAt: live ? live.lastUsedAt : k.lastUsedAt === null ? null : Date.parse(k.lastUsedAt),
      };
      const stored = live ? Object.assign(live, key) : key;
      this.keys.set(stored.id, stored);
      this.keysByHash.set(stored.hash, stored);
      this.keysByUser.get(stored.userId)!.push(stored);
      if (!this.addedAt.has(stored)) this.addedAt.set(stored, this.added++);
    }
    // One sort per user, not an insertion per key: a file's keys need not come in creation order.
    for (const keys of this.keysByUser.values()) keys.sort((a, b) => this.compare(a, b));
    this.version++;
  }

  toSnapshot(): Snapshot {
    return {
      format: FORMAT,
      version: VERSION,
      users: [...this.users.values()].map(savedUser),
      workspaces: [...this.workspaces.values()].map((w) => ({ ...w })),
      keys: [...this.keys.values()].map(savedKey),
    };
  }

  /**
   * toSnapshot() as the state file's bytes (snapshot.ts lays them out).
   * Rewriting the whole file is what makes a save atomic, but with 100,000
   * keys serialising every key on every save took a fifth of a second of
   * blocked event loop (bench/scale.mjs); so each key's line is kept and
   * reused for as long as every one of its fields is unchanged. The pieces
   * are never changed afterwards, so holding them holds the file as it was
   * written, at the cost of an array rather than a copy.
   */
  stateFileParts(): Buffer[] {
    return encodeState([...this.users.values()].map(savedUser), [...this.workspaces.values()].map((w) => ({ ...w })), this.keyLines());
  }

  private *keyLines(): Generator<Buffer> {
    for (const key of this.keys.values()) {
      const saved = this.savedLines.get(key);
      // The saved format has every field of a key: a saved line is reused only while all of them are as they were.
      if (saved && KEY_FIELDS.every((field) => saved.fields[field] === key[field])) {
        yield saved.line;
        continue;
      }
      const line = encodeRecord(savedKey(key));
      this.savedLines.set(key, { fields: { ...key }, line });
      yield line;
    }
  }

  /**
   * A new world: every user, workspace and key gone, then one user with a
   * workspace on `plan` and a bootstrap key. In place, like restore, so a
   * failed save can bring the old world back.
   */
  reset(plan: Plan): { user: UserState; secret: string } {
    this.workspaces.clear();
    this.users.clear();
    this.keys.clear();
    this.keysByHash.clear();
    this.keysByUser.clear();
    const { user } = this.createUser('Local user', plan);
    return { user, secret: this.createKey(user, 'bootstrap', null).secret };
  }

  /** The first user ever created: the one the ready line and banner speak for. */
  primaryUser(): UserState {
    const first = this.users.values().next();
    if (first.done) throw new Error('the store has no user');
    return first.value;
  }

  user(id: string): UserState | undefined {
    return this.users.get(id);
  }

  workspace(id: string): WorkspaceState | undefined {
    return this.workspaces.get(id);
  }

  /** A new user with a workspace of its own, active. */
  createUser(name: string, plan: Plan): { user: UserState; workspace: WorkspaceState } {
    const id = this.newId(ID_PREFIX.user, this.users);
    const workspace: WorkspaceState = { id: this.newId(ID_PREFIX.workspace, this.workspaces), name: 'Personal', plan };
    const user: UserState = { id, name, activeWorkspaceId: workspace.id, workspaceIds: [workspace.id] };
    this.workspaces.set(workspace.id, workspace);
    this.users.set(id, user);
    this.keysByUser.set(id, []);
    this.version++;
    return { user, workspace };
  }

  createWorkspace(user: UserState, name: string, plan: Plan): WorkspaceState {
    const workspace: WorkspaceState = { id: this.newId(ID_PREFIX.workspace, this.workspaces), name, plan };
    this.workspaces.set(workspace.id, workspace);
    user.workspaceIds.push(workspace.id);
    this.version++;
    return workspace;
  }

  setPlan(workspace: WorkspaceState, plan: Plan): void {
    workspace.plan = plan;
    this.version++;
  }

  setActiveWorkspace(user: UserState, workspace: WorkspaceState): void {
    user.activeWorkspaceId = workspace.id;
    this.version++;
  }

  /** The key is anchored to the user's active workspace now; later switches never move it. */
  createKey(user: UserState, name: string, expiresAt: number | null): { key: StoredKey; secret: string } {
    const secret = generateKey(this.random);
    const key: StoredKey = {
      id: this.newId(ID_PREFIX.key, this.keys),
      userId: user.id,
      workspaceId: user.activeWorkspaceId,
      name,
      hash: hashKey(secret).toString('hex'),
      hint: keyHint(secret),
      enabled: true,
      createdAt: this.clock.now(),
      expiresAt,
      lastUsedAt: null,
    };
    this.addKey(key);
    this.version++;
    return { key, secret };
  }

  /** Whether this very record is still a key of the store: false once it was revoked, or the world was reset. */
  holds(key: StoredKey): boolean {
    return this.keys.get(key.id) === key;
  }

  keyByHash(hashHex: string): StoredKey | undefined {
    return this.keysByHash.get(hashHex);
  }

  /** Another user's key is indistinguishable from a missing one. */
  userKey(user: UserState, id: string): StoredKey | undefined {
    const key = this.keys.get(id);
    return key && key.userId === user.id ? key : undefined;
  }

  /** Newest first; keys created within the same millisecond keep reverse creation order. */
  userKeys(user: UserState): StoredKey[] {
    return [...(this.keysByUser.get(user.id) ?? [])].reverse();
  }

  /**
   * Up to `limit` of the user's keys, newest first, starting after the
   * position `after` (a key's place in that order, from the previous page's
   * last key); `next` is the last key's place when more follow. A key made
   * or revoked between pages neither repeats nor hides another.
   */
  keyPage(user: UserState, limit: number, after: KeyPlace | null): { keys: StoredKey[]; next: KeyPlace | null } {
    const keys = this.keysByUser.get(user.id) ?? [];
    // Index of the newest key older than `after`, walking the oldest-first array backwards.
    const from = after === null ? keys.length - 1 : this.lowerBound(keys, after) - 1;
    const to = Math.max(-1, from - limit);
    const page: StoredKey[] = [];
    for (let i = from; i > to; i--) page.push(keys[i]!);
    const last = page.at(-1);
    return { keys: page, next: to >= 0 && last ? this.placeOf(last) : null };
  }

  private placeOf(key: StoredKey): KeyPlace {
    return { createdAt: key.createdAt, added: this.addedAt.get(key)! };
  }

  setEnabled(key: StoredKey, enabled: boolean): void {
    key.enabled = enabled;
    this.version++;
  }

  deleteKey(key: StoredKey): void {
    this.keys.delete(key.id);
    this.keysByHash.delete(key.hash);
    const keys = this.keysByUser.get(key.userId);
    const at = keys ? this.indexOf(keys, key) : -1;
    if (at !== -1) keys!.splice(at, 1);
    this.version++;
  }

  recordUse(key: StoredKey): void {
    key.lastUsedAt = this.clock.now();
    this.version++;
  }

  isExpired(key: StoredKey): boolean {
    return key.expiresAt !== null && key.expiresAt <= this.clock.now();
  }

  keyRecord(key: StoredKey): KeyRecord {
    return {
      id: key.id,
      name: key.name,
      hint: key.hint,
      enabled: key.enabled,
      status: this.isExpired(key) ? 'expired' : key.enabled ? 'enabled' : 'disabled',
      workspaceId: key.workspaceId,
      createdAt: isoTime(key.createdAt),
      expiresAt: key.expiresAt === null ? null : isoTime(key.expiresAt),
      lastUsedAt: key.lastUsedAt === null ? null : isoTime(key.lastUsedAt),
    };
  }

  createdKey(key: StoredKey, secret: string): CreatedKey {
    return { ...this.keyRecord(key), secret };
  }

  private addKey(key: StoredKey): void {
    this.keys.set(key.id, key);
    this.keysByHash.set(key.hash, key);
    this.addedAt.set(key, this.added++);
    const keys = this.keysByUser.get(key.userId)!;
    // A new key is almost always the newest; a clock set back puts it earlier.
    let at = keys.length;
    while (at > 0 && this.compare(keys[at - 1]!, key) > 0) at--;
    keys.splice(at, 0, key);
  }

  private compare(a: StoredKey, b: StoredKey): number {
    return this.comparePlace(a, this.placeOf(b));
  }

  private comparePlace(key: StoredKey, place: KeyPlace): number {
    return key.createdAt - place.createdAt || this.addedAt.get(key)! - place.added;
  }

  /** Where `key` is in its user's oldest-first array, by binary search on its place. */
  private indexOf(keys: StoredKey[], key: StoredKey): number {
    const at = this.lowerBound(keys, this.placeOf(key));
    return keys[at] === key ? at : -1;
  }

  /** The first index of the oldest-first array whose key is not before `place`. */
  private lowerBound(keys: StoredKey[], place: KeyPlace): number {
    let low = 0;
    let high = keys.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.comparePlace(keys[mid]!, place) < 0) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  private newId(prefix: string, taken: Map<string, unknown>): string {
    for (;;) {
      const id = prefix + randomString(ID_ALPHABET, ID_LENGTH, this.random);
      if (!taken.has(id)) return id;
    }
  }
}

function savedUser(user: UserState): SavedUser {
  return { ...user, workspaceIds: [...user.workspaceIds] };
}

function savedKey(key: StoredKey): SavedKey {
  return {
    ...key,
    createdAt: isoTime(key.createdAt),
    expiresAt: key.expiresAt === null ? null : isoTime(key.expiresAt),
    lastUsedAt: key.lastUsedAt === null ? null : isoTime(key.lastUsedAt),
  };
}

export function workspaceView(workspace: WorkspaceState): Workspace {
  return { ...workspace, requestsPerMinute: REQUESTS_PER_MINUTE[workspace.plan] };
}

export function userView(user: UserState): User {
  return { id: user.id, name: user.name, activeWorkspaceId: user.activeWorkspaceId };
}
