import { randomBytes } from 'node:crypto';
import { open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { encodeEntry, parseEntry, Replay, scanJournal } from './journal.js';
import type { Changes } from './store.js';
import {
  decodeSnapshot,
  encodeSnapshot,
  everyKey,
  snapshotInSlices,
  isCompactSnapshot,
  parseSnapshot,
  savedKey,
  SnapshotError,
  stateOf,
  type Snapshot,
  type SnapshotContent,
  type State,
} from './snapshot.js';

/** What the data file needs from the store: its changes, to append, and the whole of it, for a snapshot. */
export interface Journalled {
  /** The changes since the last call, or null; Store.takeChanges. */
  takeChanges(): Changes | null;
  hasChanges(): boolean;
  snapshotParts(): Pick<SnapshotContent, 'users' | 'workspaces' | 'keys' | 'cold'>;
}

/** A state file that cannot be used, read or written; the message names the file and the cause. */
export class StateFileError extends Error {}

/**
 * A write refused because the server no longer holds its data file's lock
 * (lock.ts); the message says what happened to the lock. Every later write
 * is refused too, so the cause is told once, by the lock, not once a write.
 */
export class LockLostError extends StateFileError {}

/** The saved state, read from the snapshot and the journal after it. */
export interface SavedState {
  state: State;
  /** Whether the snapshot is a version 1 document, to be migrated by the first compaction. */
  legacy: boolean;
  snapshotBytes: number;
  /** The journal's files, oldest first, with the bytes of intact records each holds (up to where recovery stopped). */
  journals: { gen: number; size: number; good: number }[];
  /** How many records were applied on top of the snapshot. */
  replayed: number;
  /** Where and why replaying stopped before the end of the journal, or null. */
  stopped: { gen: number; problem: string } | null;
}

/** The journal files of a data file: `<file>.journal.<n>`, appended to in order of n. */
export function journalPath(path: string, gen: number): string {
  return `${path}.journal.${gen}`;
}

async function journalGens(path: string): Promise<number[]> {
  const prefix = `${basename(path)}.journal.`;
  const names = await readdir(dirname(path)).catch((error: NodeJS.ErrnoException) => {
    throw new StateFileError(`cannot list ${dirname(path)} for the journal of ${path}: ${describeFsError(error)}`);
  });
  return names
    .filter((name) => name.startsWith(prefix) && /^[1-9]\d*$/.test(name.slice(prefix.length)))
    .map((name) => Number(name.slice(prefix.length)))
    .sort((a, b) => a - b);
}

async function readIfThere(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new StateFileError(`cannot read ${path}: ${(error as Error).message}`);
  }
}

/**
 * The snapshot and then the journal, replayed up to its end or its first torn
 * or damaged record. A torn record at the end of a file that a later one
 * continues without a gap is the trace of a failed append that could not be
 * cut off, and is passed over; any other problem ends the replay there.
 * Null when the data file does not exist yet.
 */
export async function readState(path: string): Promise<SavedState | null> {
  const bytes = await readIfThere(path);
  const gens = await journalGens(path);
  if (bytes === null) {
    if (gens.length > 0) throw new StateFileError(`${path} does not exist, but its journal ${journalPath(path, gens[0]!)} does: the journal means nothing without it. Restore ${path}, or move the journal away`);
    return null;
  }
  const legacy = !isCompactSnapshot(bytes);
  let state: State;
  try {
    state = legacy ? stateOf(parseSnapshot(parseJson(bytes, path))) : decodeSnapshot(bytes);
  } catch (error) {
    if (error instanceof SnapshotError) throw new StateFileError(`${path} is not a valid svc state file: ${error.message}`);
    throw error;
  }
  const replay = new Replay(state);
  const journals: SavedState['journals'] = [];
  let replayed = 0;
  let stopped: SavedState['stopped'] = null;
  for (const [i, gen] of gens.entries()) {
    const file = journalPath(path, gen);
    const content = (await readIfThere(file)) ?? Buffer.alloc(0);
    const scan = scanJournal(content);
    let good = 0;
    for (const payload of scan.payloads) {
      try {
        const entry = parseEntry(payload);
        const place = replay.place(entry.seq);
        if (place === 'gap') {
          stopped = { gen, problem: `${file}: change ${replay.lastSeq + 1} is missing (the next record found is ${entry.seq})` };
          break;
        }
        if (place === 'next') {
          replay.apply(entry.seq, entry.ops);
          replayed++;
        }
      } catch (error) {
        if (error instanceof SnapshotError) throw new StateFileError(`${file} is not a valid svc journal: ${error.message}`);
        throw error;
      }
      good += 8 + payload.length;
    }
    journals.push({ gen, size: content.length, good });
    if (stopped) break;
    if (scan.problem && !(scan.torn && i < gens.length - 1)) {
      stopped = { gen, problem: `${file}: ${scan.problem}` };
      break;
    }
  }
  let loaded: State;
  try {
    loaded = replay.state();
  } catch (error) {
    if (error instanceof SnapshotError) throw new StateFileError(`${path} with its journal is not a valid svc state: ${error.message}`);
    throw error;
  }
  return { state: loaded, legacy, snapshotBytes: bytes.length, journals, replayed, stopped };
}

/** The saved state as a version 1 document (what the API's records look like), or null when there is none. */
export async function loadState(path: string): Promise<Snapshot | null> {
  const saved = await readState(path);
  if (!saved) return null;
  const { users, workspaces } = saved.state;
  return { format: 'svc-local-state', version: 1, users, workspaces, keys: everyKey(saved.state).map(savedKey) };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parseJson(bytes: Buffer, path: string): unknown {
  try {
    return JSON.parse(utf8.decode(bytes));
  } catch (error) {
    throw new StateFileError(`${path} is not valid JSON (${(error as Error).message})`);
  }
}

/**
 * Names of the state file's temp files: `.<name>.<pid>.<n>.<hex>.tmp` beside
 * it. The pid says whose a leftover is, so start-up can clear a crashed
 * server's without touching a live one's.
 */
export function tempFileName(path: string, counter: number): string {
  return `.${basename(path)}.${process.pid}.${counter}.${randomBytes(4).toString('hex')}.tmp`;
}

/** The pid in a temp file name of `path`'s, or null when `name` is not one. */
export function tempFileOwner(path: string, name: string): number | null {
  const prefix = `.${basename(path)}.`;
  if (!name.startsWith(prefix)) return null;
  const match = /^(\d+)\.\d+\.[0-9a-f]+\.tmp$/.exec(name.slice(prefix.length));
  return match ? Number(match[1]) : null;
}

export interface StateFileOptions {
  /** Told once per failed save (but for a LockLostError), of a compaction that failed, and of what recovery left out. */
  warn?: (message: string) => void;
  /** Settles just before each append and each snapshot's rename; a rejection (a StateFileError) fails that write. */
  verify?: () => Promise<void>;
  /** The journal is compacted once it is larger than the snapshot and than this; 1 MiB by default. */
  compactAfterBytes?: number;
}

interface Waiter {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

const DONE = Promise.resolve();
const DEFAULT_COMPACT_AFTER = 1024 * 1024;

/**
 * One journal file, appended to at its end and synced before an append is
 * reported done. It is opened for each append and closed after: a file held
 * open for writing would keep its file system from being remounted read-only.
 */
class JournalWriter {
  /** Set when a failed append could not be cut off: the file ends in a torn record, so the next append goes to a new file. */
  broken = false;
  size = 0;

  private constructor(private readonly file: string) {}

  /** A new, empty journal file, its directory synced so the file survives a crash as soon as a record in it does. */
  static async create(file: string): Promise<JournalWriter> {
    await (await open(file, 'wx', 0o600)).close();
    await syncDirectory(dirname(file));
    return new JournalWriter(file);
  }

  async append(bytes: Buffer): Promise<void> {
    const handle = await open(this.file, 'r+');
    try {
      let done = 0;
      while (done < bytes.length) done += (await handle.write(bytes, done, bytes.length - done, this.size + done)).bytesWritten;
      await handle.datasync();
      this.size += bytes.length;
    } catch (error) {
      await handle.truncate(this.size).catch(() => {
        this.broken = true;
      });
      throw error;
    } finally {
      await handle.close();
    }
  }
}

async function syncDirectory(dir: string): Promise<void> {
  const directory = await open(dir, 'r');
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}

/**
 * The data file kept as a snapshot plus a journal of the changes since.
 * A save appends one record of what changed and syncs it: its cost follows
 * the change, not the state's size. Saves group-commit: at most one append
 * runs at a time; every `save()` that arrives while one runs joins the next,
 * which takes the changes when it starts and so covers all of them. A
 * caller's promise resolves only after an append that began after its change.
 *
 * When an append fails, memory goes back to the last durable state: its
 * changes are undone, and so are those queued behind it, which were made on
 * top of them; every caller of either is rejected. The journal is cut back
 * to its last whole record, or, when that fails too, the next append starts
 * a new journal file.
 *
 * Compaction writes the state as a new snapshot (temp file, fsync, rename)
 * and drops the journal files it covers: at start-up when there was a
 * journal or an old-format file, at shutdown, and when the journal outgrows
 * the snapshot. The snapshot's bytes are made when an append takes its
 * changes, when memory is exactly what is durable; from then on appends go
 * to a new journal file, and the snapshot is written beside them, so no
 * answer waits for it.
 */
export class StateFile {
  private current: Promise<void> | null = null;
  private next: Waiter | null = null;
  private compacting: Promise<void> | null = null;
  private compactWanted = false;
  /** The journal's size (all its files) past which a compaction is wanted. */
  private compactAt: number;
  private seq: number;
  /** The journal file appended to, made at its first append: a server that changes nothing leaves none. */
  private journal: JournalWriter | null = null;
  /** The number of that file (journalPath). */
  private gen: number;
  /** The journal files before it, with their sizes. */
  private readonly older: Map<number, number>;
  private snapshotBytes: number;
  private readonly extra: Record<string, unknown>;
  private tempCounter = 0;
  private readonly warn: (message: string) => void;
  private readonly verify: () => Promise<void>;
  private readonly minimum: number;

  private constructor(
    readonly path: string,
    private readonly store: Journalled,
    saved: { seq: number; gen: number; extra: Record<string, unknown>; snapshotBytes: number; older: Map<number, number> },
    options: StateFileOptions,
  ) {
    this.seq = saved.seq;
    this.gen = saved.gen;
    this.extra = saved.extra;
    this.snapshotBytes = saved.snapshotBytes;
    this.older = saved.older;
    this.warn = options.warn ?? (() => {});
    this.verify = options.verify ?? (() => DONE);
    this.minimum = options.compactAfterBytes ?? DEFAULT_COMPACT_AFTER;
    this.compactAt = this.threshold();
  }

  /** A new data file holding the store as it is: a snapshot, and no journal yet. */
  static async create(path: string, store: Journalled, options: StateFileOptions = {}): Promise<StateFile> {
    store.takeChanges();
    const file = new StateFile(path, store, { seq: 0, gen: 1, extra: {}, snapshotBytes: 0, older: new Map() }, options);
    const bytes = encodeSnapshot({ ...store.snapshotParts(), seq: 0, extra: {} });
    await file.writeSnapshot(bytes);
    file.snapshotBytes = bytes.length;
    file.compactAt = file.threshold();
    return file;
  }

  /**
   * The data file as readState found it. What recovery left out is cut off
   * (and said), so no append ever follows a torn or damaged record; appends
   * go to a new journal file. A compaction is wanted when the snapshot is of
   * the old format or a journal was found; `compactIfWanted` starts it.
   */
  static async open(path: string, store: Journalled, saved: SavedState, options: StateFileOptions = {}): Promise<StateFile> {
    const journals = [...saved.journals];
    if (saved.stopped) {
      const at = journals.findIndex((j) => j.gen === saved.stopped!.gen);
      const cut = journals[at]!;
      const dropped = journals.slice(at + 1);
      const lost = cut.size - cut.good + dropped.reduce((sum, j) => sum + j.size, 0);
      await truncateFile(journalPath(path, cut.gen), cut.good);
      for (const j of dropped) await removeFile(journalPath(path, j.gen));
      journals.splice(at + 1);
      cut.size = cut.good;
      options.warn?.(
        `recovered ${path} up to change ${saved.state.seq} of its journal and no further: ${saved.stopped.problem}; ` +
          `the ${lost} bytes from there on were dropped (a crash during a save leaves that; anything else is damage to the disk)`,
      );
    }
    for (const j of journals.filter((j) => j.size === 0)) await removeFile(journalPath(path, j.gen));
    const older = journals.filter((j) => j.size > 0);
    const file = new StateFile(
      path,
      store,
      {
        seq: saved.state.seq,
        gen: (saved.journals.at(-1)?.gen ?? 0) + 1,
        extra: saved.state.extra,
        snapshotBytes: saved.snapshotBytes,
        older: new Map(older.map((j) => [j.gen, j.size])),
      },
      options,
    );
    file.compactWanted = saved.legacy || older.length > 0;
    return file;
  }

  save(): Promise<void> {
    if (!this.current) return this.startWrite();
    if (!this.next) {
      let resolve!: () => void;
      let reject!: (error: unknown) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      this.next = { promise, resolve, reject };
    }
    return this.next.promise;
  }

  /**
   * Settles once every change made so far is durable: at once when no write
   * is pending, else with the write that carries the latest change, so it
   * rejects when that write failed and the changes were undone.
   */
  whenDurable(): Promise<void> {
    return this.next?.promise ?? this.current ?? DONE;
  }

  /** Starts a compaction that start-up or the journal's growth asked for, unless one runs; its failure is only told. */
  compactIfWanted(): void {
    if (this.compactWanted && !this.current && !this.compacting) this.startWrite().catch(() => {});
  }

  /** Settles once no append and no compaction runs: the files are then as a restart would find them. */
  async whenIdle(): Promise<void> {
    while (this.current || this.compacting) {
      await this.current?.catch(() => {});
      await this.compacting;
    }
  }

  /** For shutdown: waits for pending writes, then saves what is unsaved (lastUsedAt is only saved lazily) and compacts. */
  async flush(): Promise<void> {
    await this.whenIdle();
    if (this.journalBytes() > 0 || this.store.hasChanges()) {
      this.compactWanted = true;
      await this.save();
      await this.compacting;
    }
    this.rotate();
  }

  private threshold(): number {
    return Math.max(this.snapshotBytes, this.minimum);
  }

  private journalBytes(): number {
    let sum = this.journal?.size ?? 0;
    for (const size of this.older.values()) sum += size;
    return sum;
  }

  private startWrite(): Promise<void> {
    const changes = this.store.takeChanges();
    const seq = changes ? this.seq + 1 : this.seq;
    // Now, and only now, memory is what the file will hold once this append is done.
    // What the snapshot holds is taken now; its bytes are made in slices once the append is done (snapshotInSlices).
    const snapshot = this.compactWanted && !this.compacting ? snapshotInSlices({ ...this.store.snapshotParts(), seq, extra: this.extra }) : null;
    if (snapshot) this.compactWanted = false;
    const write = this.append(seq, changes).then(
      () => {
        if (snapshot) {
          // Appends from here on hold what the snapshot does not, so they go to a file it does not replace.
          this.rotate();
          this.compacting = this.compact(snapshot, [...this.older.keys()]).finally(() => (this.compacting = null));
        }
        this.current = null;
        const waiting = this.next;
        this.next = null;
        if (waiting) this.startWrite().then(waiting.resolve, waiting.reject);
        else this.compactIfWanted();
      },
      (error: StateFileError) => {
        if (snapshot) this.compactWanted = true;
        this.current = null;
        const waiting = this.next;
        this.next = null;
        // Rejections only queue their callers' continuations: memory is back before any of them runs.
        waiting?.reject(error);
        this.store.takeChanges()?.undo();
        changes?.undo();
        if (!(error instanceof LockLostError)) this.warn(`${error.message}; the changes since the last save were undone`);
        throw error;
      },
    );
    this.current = write;
    return write;
  }

  private async append(seq: number, changes: Changes | null): Promise<void> {
    if (!changes) return;
    const entry = encodeEntry(seq, changes.ops);
    try {
      await this.verify();
      if (this.journal?.broken) this.rotate();
      this.journal ??= await JournalWriter.create(journalPath(this.path, this.gen));
      await this.journal.append(entry);
    } catch (error) {
      if (error instanceof StateFileError) throw error;
      throw new StateFileError(`cannot write ${this.path}: ${describeFsError(error as NodeJS.ErrnoException)}`);
    }
    this.seq = seq;
    if (!this.compacting && this.journalBytes() > this.compactAt) this.compactWanted = true;
  }

  /** The next append goes to a new journal file. */
  private rotate(): void {
    if (!this.journal) return;
    this.older.set(this.gen, this.journal.size);
    this.journal = null;
    this.gen++;
  }

  /**
   * Replaces the data file with the snapshot, which holds every change in
   * the journal files before the one now appended to; then removes them.
   * Until the rename they are the record; after it, what they hold is in the
   * snapshot, which a replay skips by its sequence number.
   */
  private async compact(snapshot: () => Promise<Buffer>, covered: number[]): Promise<void> {
    let bytes: Buffer;
    try {
      bytes = await snapshot();
      await this.writeSnapshot(bytes);
    } catch (error) {
      // The journal still holds every change; the next try waits until it has grown as much again.
      this.compactAt = this.journalBytes() + this.threshold();
      if (!(error instanceof LockLostError)) this.warn(`could not compact ${this.path} (its journal still holds every change): ${(error as Error).message}`);
      return;
    }
    this.snapshotBytes = bytes.length;
    for (const gen of covered) {
      await removeFile(journalPath(this.path, gen)).catch(() => {});
      this.older.delete(gen);
    }
    this.compactAt = this.threshold();
  }

  /**
   * Temp file in the same directory, fsync, rename over the old file, fsync the directory so the rename itself
   * survives a crash. The rename is what another server would load, so `verify` runs as close before it as it can.
   */
  private async writeSnapshot(bytes: Buffer): Promise<void> {
    const dir = dirname(this.path);
    const temp = join(dir, tempFileName(this.path, ++this.tempCounter));
    try {
      const file = await open(temp, 'wx', 0o600);
      try {
        await file.writeFile(bytes);
        await file.sync();
      } finally {
        await file.close();
      }
      await this.verify();
      await rename(temp, this.path);
    } catch (error) {
      await unlink(temp).catch(() => {});
      if (error instanceof StateFileError) throw error;
      throw new StateFileError(`cannot write ${this.path}: ${describeFsError(error as NodeJS.ErrnoException)}`);
    }
    // The file now holds the new state, whatever happens next. A directory that cannot be synced is only reported.
    try {
      await syncDirectory(dir);
    } catch (error) {
      this.warn(`saved ${this.path}, but could not sync its directory: ${describeFsError(error as NodeJS.ErrnoException)}`);
    }
  }
}

async function truncateFile(path: string, length: number): Promise<void> {
  const handle = await open(path, 'r+').catch((error: NodeJS.ErrnoException) => {
    throw new StateFileError(`cannot open ${path} to cut off what recovery left out: ${describeFsError(error)}`);
  });
  try {
    await handle.truncate(length);
    await handle.sync();
  } catch (error) {
    throw new StateFileError(`cannot cut off what recovery left out of ${path}: ${describeFsError(error as NodeJS.ErrnoException)}`);
  } finally {
    await handle.close();
  }
}

async function removeFile(path: string): Promise<void> {
  await unlink(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw new StateFileError(`cannot remove ${path}: ${describeFsError(error)}`);
  });
}

/** The cause in words, without the temp file's name, which means nothing to the operator. */
export function describeFsError(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ENOENT':
      return 'its directory does not exist';
    case 'ENOTDIR':
      return 'a part of its path is not a directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'the file system is read-only';
    case 'ENOSPC':
      return 'no space left on the device';
    case 'EDQUOT':
      return 'the disk quota is exhausted';
    default:
      return error.message;
  }
}
