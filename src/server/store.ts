import { randomBytes } from 'node:crypto';
import { keyHint } from '../contract/key-format.js';
import { generateKey, randomString } from '../contract/key-generation.js';
import { REQUESTS_PER_MINUTE, type Plan } from '../contract/plans.js';
import type { CreatedKey, KeyRecord, User, Workspace } from '../contract/types.js';
import { isoTime, type Clock } from './clock.js';
import { ID_ALPHABET, ID_LENGTH, ID_PREFIX } from './ids.js';
import { hashKey } from './key-hash.js';
import { encodeRecord, encodeState, FORMAT, VERSION, type SavedKey, type SavedUser, type Snapshot } from './snapshot.js';

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

/** Every field of a key: a saved line is reused only while all of them are as they were. */
const KEY_FIELDS = [
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
] as const satisfies readonly (keyof StoredKey)[];

export class Store {
  private readonly users = new Map<string, UserState>();
  private readonly workspaces = new Map<string, WorkspaceState>();
  private readonly keys = new Map<string, StoredKey>();
  private readonly keysByHash = new Map<string, StoredKey>();
  private readonly keyIdsByUser = new Map<string, Set<string>>();
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
    this.keyIdsByUser.clear();
    for (const w of snapshot.workspaces) {
      this.workspaces.set(w.id, Object.assign(workspaces.get(w.id) ?? ({} as WorkspaceState), w));
    }
    for (const u of snapshot.users) {
      const user = Object.assign(users.get(u.id) ?? ({} as UserState), u, { workspaceIds: [...u.workspaceIds] });
      this.users.set(u.id, user);
      this.keyIdsByUser.set(u.id, new Set());
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
      this.addKey(live ? Object.assign(live, key) : key);
    }
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
    this.keyIdsByUser.clear();
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
    this.keyIdsByUser.set(id, new Set());
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
    const ids = [...(this.keyIdsByUser.get(user.id) ?? [])].reverse();
    return ids.map((id) => this.keys.get(id)!).sort((a, b) => b.createdAt - a.createdAt);
  }

  setEnabled(key: StoredKey, enabled: boolean): void {
    key.enabled = enabled;
    this.version++;
  }

  deleteKey(key: StoredKey): void {
    this.keys.delete(key.id);
    this.keysByHash.delete(key.hash);
    this.keyIdsByUser.get(key.userId)?.delete(key.id);
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
    this.keyIdsByUser.get(key.userId)!.add(key.id);
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
