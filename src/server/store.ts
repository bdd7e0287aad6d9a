import { randomBytes } from 'node:crypto';
import { keyHint } from '../contract/key-format.js';
import { generateKey, randomString } from '../contract/key-generation.js';
import { REQUESTS_PER_MINUTE, type Plan } from '../contract/plans.js';
import type { CreatedKey, KeyRecord, KeyStatus, User, Workspace } from '../contract/types.js';
import { isoTime, type Clock } from './clock.js';
import { ID_ALPHABET, ID_LENGTH, ID_PREFIX } from './ids.js';
import { hashKey } from './key-hash.js';
import type { Op } from './journal.js';
import { FORMAT, savedKey, SnapshotError, stateOf, VERSION, type KeyFields, type SavedUser, type Snapshot, type SnapshotContent, type State } from './snapshot.js';
import type { ColdKeys } from './snapshot-keys.js';

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
export interface StoredKey extends KeyFields {
  /** The order the key was added to this server's memory in, telling apart keys created in the same millisecond; never saved. */
  added: number;
}

/** The changes made since the last `takeChanges`, as journal operations, and how to take them back. */
export interface Changes {
  ops: Op[];
  /** Puts memory back as it was before these changes; the changes taken later must be undone first. */
  undo(): void;
}

/** A record as it was before the first change since the last `takeChanges`: null when it did not exist. */
type Prior =
  | { kind: 'workspace'; live: WorkspaceState; was: WorkspaceState | null }
  | { kind: 'user'; live: UserState; was: UserState | null }
  | { kind: 'key'; live: StoredKey; was: StoredKey | null };

/** What a snapshot of the store is made from. */
export type SnapshotParts = Pick<SnapshotContent, 'users' | 'workspaces' | 'cold'> & { keys: StoredKey[] };

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
  private added = 0;
  /**
   * The loaded snapshot's keys nothing has asked for yet (snapshot-keys.ts).
   * Every lookup falls through to it; a key found there becomes an object
   * in the maps above (`warm`) and stays one. Null once none is left cold.
   */
  private cold: ColdKeys | null = null;
  /** Records changed since the last takeChanges, by kind and id, with what they were before. */
  private priors = new Map<string, Prior>();
  /** The whole world before a reset since the last takeChanges, if one came. */
  private beforeReset: { state: State; keys: Map<string, StoredKey> } | null = null;
  /** Keys whose lastUsedAt moved since the last takeChanges: saved with the next change, never undone. */
  private used = new Set<StoredKey>();

  constructor(
    private readonly clock: Clock,
    private readonly random: (size: number) => Buffer = randomBytes,
  ) {}

  static fromSnapshot(snapshot: Snapshot, clock: Clock): Store {
    return Store.load(stateOf(snapshot), clock);
  }

  static load(state: State, clock: Clock, random?: (size: number) => Buffer): Store {
    const store = new Store(clock, random);
    store.replace(state, new Map());
    return store;
  }

  /**
   * Makes the state the one given, in place: app and handlers hold this
   * store, and requests in flight hold its records, so a record of `live`
   * that is in `state` too keeps its identity and only its fields change.
   * The state's key objects become the store's: they must be its alone.
   * A surviving key keeps the lastUsedAt it has in memory: that is saved
   * lazily, and its use did happen.
   */
  private replace(state: State, live: Map<string, StoredKey>): void {
    const workspaces = new Map(this.workspaces);
    const users = new Map(this.users);
    this.workspaces.clear();
    this.users.clear();
    this.keys.clear();
    this.keysByHash.clear();
    this.keysByUser.clear();
    for (const w of state.workspaces) {
      this.workspaces.set(w.id, Object.assign(workspaces.get(w.id) ?? ({} as WorkspaceState), w));
    }
    for (const u of state.users) {
      const user = Object.assign(users.get(u.id) ?? ({} as UserState), u, { workspaceIds: [...u.workspaceIds] });
      this.users.set(u.id, user);
      this.keysByUser.set(u.id, []);
    }
    const { cold } = state;
    this.cold = cold && cold.size > 0 ? cold : null;
    // A cold key's place in the order keys were added is its index in the file; a key the journal replaced keeps that place.
    if (cold) this.added = Math.max(this.added, cold.count);
    for (const k of state.keys) {
      const before = live.get(k.id);
      let stored: StoredKey;
      if (before) {
        const { lastUsedAt } = before;
        stored = Object.assign(before, k, { lastUsedAt, added: before.added });
      } else {
        // The state's own object, taken over rather than copied: a load of many keys makes no second set of them.
        const i = cold ? cold.findId(k.id) : -1;
        stored = k as StoredKey;
        stored.added = i === -1 ? this.added++ : i;
      }
      this.keys.set(stored.id, stored);
      this.keysByHash.set(stored.hash, stored);
      this.keysByUser.get(stored.userId)!.push(stored);
    }
    // The indexes are what tells two keys of one id or hash apart; a snapshot's loader leaves that to them.
    if (this.keys.size !== state.keys.length) throw new SnapshotError('two keys share an id');
    if (this.keysByHash.size !== state.keys.length) throw new SnapshotError('two keys share a hash');
    if (cold && state.keys.some((k) => cold.has(cold.findId(k.id)))) throw new SnapshotError('two keys share an id');
    if (cold && state.keys.some((k) => cold.has(cold.findHash(k.hash)))) throw new SnapshotError('two keys share a hash');
    // A file's keys need not come in creation order, though a server's own do: one sort per user that needs it, not an insertion per key.
    for (const keys of this.keysByUser.values()) if (!inOrder(keys)) keys.sort(byPlace);
  }

  /** The state as loaded and saved, copied. */
  state(): State {
    this.warmAll();
    const { users, workspaces, keys } = this.snapshotParts();
    return { seq: 0, users, workspaces, keys: keys.map((k) => ({ ...k })), cold: null, extra: {} };
  }

  toSnapshot(): Snapshot {
    this.warmAll();
    const { users, workspaces, keys } = this.snapshotParts();
    return { format: FORMAT, version: VERSION, users, workspaces, keys: keys.map(savedKey) };
  }

  /**
   * Everything a snapshot holds (snapshot.ts, encodeSnapshot): the keys held
   * as objects in the order they were added, and the cold ones as they are
   * now, which the encoder merges into that order.
   */
  snapshotParts(): SnapshotParts {
    const keys = [...this.keys.values()];
    // Map order is the order of arrival in memory: a cold key warmed late, or a key an undo put back, arrives late but keeps its place.
    if (!inAddedOrder(keys)) keys.sort((a, b) => a.added - b.added);
    return {
      users: [...this.users.values()].map(savedUser),
      workspaces: [...this.workspaces.values()].map((w) => ({ ...w })),
      keys,
      cold: this.cold ? { keys: this.cold, indexes: this.cold.indexes() } : null,
    };
  }

  /** Whether anything changed since the last takeChanges, a key's use included. */
  hasChanges(): boolean {
    return this.priors.size > 0 || this.beforeReset !== null || this.used.size > 0;
  }

  /**
   * The changes since the last call, as journal operations: each changed
   * record as it is now (or its removal), in an order a replay can apply
   * (workspaces, users, keys); null when nothing changed. The records are
   * whole, so replaying one twice is harmless.
   */
  takeChanges(): Changes | null {
    if (!this.hasChanges()) return null;
    const priors = [...this.priors.values()];
    const beforeReset = this.beforeReset;
    const used = [...this.used];
    this.priors = new Map();
    this.beforeReset = null;
    this.used = new Set();
    const ops: Op[] = [];
    if (beforeReset) {
      ops.push({ reset: true });
      for (const w of this.workspaces.values()) ops.push({ workspace: { ...w } });
      for (const u of this.users.values()) ops.push({ user: savedUser(u) });
      for (const k of this.keys.values()) ops.push({ key: savedKey(k) });
    } else {
      for (const kind of ['workspace', 'user', 'key'] as const) {
        for (const prior of priors) if (prior.kind === kind) ops.push(this.opOf(prior));
      }
      const changed = new Set<unknown>(priors.map((p) => p.live));
      for (const key of used) if (!changed.has(key) && this.holds(key)) ops.push({ key: savedKey(key) });
    }
    return {
      ops,
      undo: () => {
        if (beforeReset) this.replace(beforeReset.state, beforeReset.keys);
        else for (const prior of priors.reverse()) this.putBack(prior);
        for (const key of used) if (this.holds(key)) this.used.add(key);
      },
    };
  }

  private opOf(prior: Prior): Op {
    switch (prior.kind) {
      case 'workspace':
        return { workspace: { ...prior.live } };
      case 'user':
        return { user: savedUser(prior.live) };
      case 'key':
        return this.holds(prior.live) ? { key: savedKey(prior.live) } : { revoke: prior.live.id };
    }
  }

  /** Called before a record changes: remembers it as it was, once per takeChanges. */
  private touch(prior: Prior): void {
    if (this.beforeReset) return;
    const id = `${prior.kind} ${prior.live.id}`;
    if (!this.priors.has(id)) this.priors.set(id, prior);
  }

  private putBack(prior: Prior): void {
    switch (prior.kind) {
      case 'workspace':
        if (prior.was) this.workspaces.set(prior.live.id, Object.assign(prior.live, prior.was));
        else this.workspaces.delete(prior.live.id);
        return;
      case 'user':
        if (prior.was) this.users.set(prior.live.id, Object.assign(prior.live, prior.was, { workspaceIds: [...prior.was.workspaceIds] }));
        else {
          this.users.delete(prior.live.id);
          this.keysByUser.delete(prior.live.id);
        }
        return;
      case 'key': {
        const key = prior.live;
        if (this.holds(key)) this.removeKey(key);
        if (prior.was) {
          Object.assign(key, prior.was, { lastUsedAt: key.lastUsedAt });
          this.addKey(key);
        }
      }
    }
  }

  /**
   * A new world: every user, workspace and key gone, then one user with a
   * workspace on `plan` and a bootstrap key. In place, like restore, so a
   * failed save can bring the old world back.
   */
  reset(plan: Plan): { user: UserState; secret: string } {
    if (!this.beforeReset) {
      // What an undo returns to is the world as of the last takeChanges: the changes since are taken back first, as the reset drops them anyway.
      for (const prior of [...this.priors.values()].reverse()) this.putBack(prior);
      this.priors.clear();
      this.beforeReset = { state: this.state(), keys: new Map(this.keys) };
    }
    this.workspaces.clear();
    this.users.clear();
    this.keys.clear();
    this.keysByHash.clear();
    this.keysByUser.clear();
    this.cold = null;
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
    this.touch({ kind: 'workspace', live: workspace, was: null });
    this.touch({ kind: 'user', live: user, was: null });
    this.workspaces.set(workspace.id, workspace);
    this.users.set(id, user);
    this.keysByUser.set(id, []);
    return { user, workspace };
  }

  createWorkspace(user: UserState, name: string, plan: Plan): WorkspaceState {
    const workspace: WorkspaceState = { id: this.newId(ID_PREFIX.workspace, this.workspaces), name, plan };
    this.touch({ kind: 'workspace', live: workspace, was: null });
    this.touch({ kind: 'user', live: user, was: savedUser(user) });
    this.workspaces.set(workspace.id, workspace);
    user.workspaceIds.push(workspace.id);
    return workspace;
  }

  setPlan(workspace: WorkspaceState, plan: Plan): void {
    this.touch({ kind: 'workspace', live: workspace, was: { ...workspace } });
    workspace.plan = plan;
  }

  setActiveWorkspace(user: UserState, workspace: WorkspaceState): void {
    this.touch({ kind: 'user', live: user, was: savedUser(user) });
    user.activeWorkspaceId = workspace.id;
  }

  /** The key is anchored to the user's active workspace now; later switches never move it. */
  createKey(user: UserState, name: string, expiresAt: number | null): { key: StoredKey; secret: string } {
    const secret = generateKey(this.random);
    // Made as a cold key is made when first asked for (ColdKeys.take), `added` last: one shape keeps lookups on keys fast.
    const key: StoredKey = {
      id: this.newId(ID_PREFIX.key, this.keys, (id) => this.cold !== null && this.cold.findId(id) !== -1),
      userId: user.id,
      workspaceId: user.activeWorkspaceId,
      name,
      hash: hashKey(secret).toString('hex'),
      hint: keyHint(secret),
      enabled: true,
      createdAt: this.clock.now(),
      expiresAt,
      lastUsedAt: null,
      added: this.added++,
    };
    this.touch({ kind: 'key', live: key, was: null });
    this.addKey(key);
    return { key, secret };
  }

  /** Whether this very record is still a key of the store: false once it was revoked, or the world was reset. */
  holds(key: StoredKey): boolean {
    return this.keys.get(key.id) === key;
  }

  keyByHash(hashHex: string): StoredKey | undefined {
    return this.keysByHash.get(hashHex) ?? this.warm(this.cold?.findHash(hashHex));
  }

  /** Another user's key is indistinguishable from a missing one. */
  userKey(user: UserState, id: string): StoredKey | undefined {
    const key = this.keys.get(id) ?? this.warm(this.cold?.findId(id));
    return key && key.userId === user.id ? key : undefined;
  }

  /** Newest first; keys created within the same millisecond keep reverse creation order. */
  userKeys(user: UserState): StoredKey[] {
    return [...this.keysOf(user.id)].reverse();
  }

  /**
   * Up to `limit` of the user's keys, newest first, starting after the
   * position `after` (a key's place in that order, from the previous page's
   * last key); `next` is the last key's place when more follow. A key made
   * or revoked between pages neither repeats nor hides another.
   */
  keyPage(user: UserState, limit: number, after: KeyPlace | null): { keys: StoredKey[]; next: KeyPlace | null } {
    const keys = this.keysOf(user.id);
    // Index of the newest key older than `after`, walking the oldest-first array backwards.
    const from = after === null ? keys.length - 1 : this.lowerBound(keys, after) - 1;
    const to = Math.max(-1, from - limit);
    const page: StoredKey[] = [];
    for (let i = from; i > to; i--) page.push(keys[i]!);
    const last = page.at(-1);
    return { keys: page, next: to >= 0 && last ? this.placeOf(last) : null };
  }

  private placeOf(key: StoredKey): KeyPlace {
    return { createdAt: key.createdAt, added: key.added };
  }

  setEnabled(key: StoredKey, enabled: boolean): void {
    this.touch({ kind: 'key', live: key, was: { ...key } });
    key.enabled = enabled;
  }

  deleteKey(key: StoredKey): void {
    this.touch({ kind: 'key', live: key, was: { ...key } });
    this.removeKey(key);
  }

  private removeKey(key: StoredKey): void {
    this.keys.delete(key.id);
    this.keysByHash.delete(key.hash);
    const keys = this.keysByUser.get(key.userId);
    const at = keys ? this.indexOf(keys, key) : -1;
    if (at !== -1) keys!.splice(at, 1);
  }

  recordUse(key: StoredKey): void {
    key.lastUsedAt = this.clock.now();
    this.used.add(key);
  }

  isExpired(key: StoredKey): boolean {
    return key.expiresAt !== null && key.expiresAt <= this.clock.now();
  }

  keyStatus(key: StoredKey): KeyStatus {
    return this.isExpired(key) ? 'expired' : key.enabled ? 'enabled' : 'disabled';
  }

  keyRecord(key: StoredKey): KeyRecord {
    return {
      id: key.id,
      name: key.name,
      hint: key.hint,
      enabled: key.enabled,
      status: this.keyStatus(key),
      workspaceId: key.workspaceId,
      createdAt: isoTime(key.createdAt),
      expiresAt: key.expiresAt === null ? null : isoTime(key.expiresAt),
      lastUsedAt: key.lastUsedAt === null ? null : isoTime(key.lastUsedAt),
    };
  }

  createdKey(key: StoredKey, secret: string): CreatedKey {
    return { ...this.keyRecord(key), secret };
  }

  /** A user's keys oldest first, every cold one among them warmed first: pushed, then sorted once if a file had them out of order. */
  private keysOf(userId: string): StoredKey[] {
    const keys = this.keysByUser.get(userId) ?? [];
    const cold = this.cold;
    const warming = cold ? cold.ofUser(userId) : [];
    if (warming.length === 0) return keys;
    for (const i of warming) {
      const key: StoredKey = cold!.take(i);
      this.keys.set(key.id, key);
      this.keysByHash.set(key.hash, key);
      keys.push(key);
    }
    if (cold!.size === 0) this.cold = null;
    if (!inOrder(keys)) keys.sort(byPlace);
    return keys;
  }

  /** The cold key at index i (none for -1 or undefined) made an object of the store's, in every index; the same object from then on. */
  private warm(i: number | undefined): StoredKey | undefined {
    const cold = this.cold;
    if (cold === null || i === undefined || !cold.has(i)) return undefined;
    const key: StoredKey = cold.take(i);
    if (cold.size === 0) this.cold = null;
    this.addKey(key);
    return key;
  }

  private warmAll(): void {
    for (const userId of this.users.keys()) this.keysOf(userId);
  }

  /** A key put back by an undo keeps its place in the order keys were added. */
  private addKey(key: StoredKey): void {
    this.keys.set(key.id, key);
    this.keysByHash.set(key.hash, key);
    const keys = this.keysByUser.get(key.userId)!;
    const at = this.lowerBound(keys, this.placeOf(key));
    if (at === keys.length) keys.push(key);
    else keys.splice(at, 0, key);
  }

  private comparePlace(key: StoredKey, place: KeyPlace): number {
    return key.createdAt - place.createdAt || key.added - place.added;
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

  private newId(prefix: string, taken: Map<string, unknown>, takenCold: (id: string) => boolean = () => false): string {
    for (;;) {
      const id = prefix + randomString(ID_ALPHABET, ID_LENGTH, this.random);
      if (!taken.has(id) && !takenCold(id)) return id;
    }
  }
}

function inAddedOrder(keys: StoredKey[]): boolean {
  for (let i = 1; i < keys.length; i++) if (keys[i - 1]!.added > keys[i]!.added) return false;
  return true;
}

function byPlace(a: StoredKey, b: StoredKey): number {
  return a.createdAt - b.createdAt || a.added - b.added;
}

function inOrder(keys: StoredKey[]): boolean {
  for (let i = 1; i < keys.length; i++) if (byPlace(keys[i - 1]!, keys[i]!) > 0) return false;
  return true;
}

function savedUser(user: UserState): SavedUser {
  return { ...user, workspaceIds: [...user.workspaceIds] };
}

export function workspaceView(workspace: WorkspaceState): Workspace {
  return { ...workspace, requestsPerMinute: REQUESTS_PER_MINUTE[workspace.plan] };
}

export function userView(user: UserState): User {
  return { id: user.id, name: user.name, activeWorkspaceId: user.activeWorkspaceId };
}
