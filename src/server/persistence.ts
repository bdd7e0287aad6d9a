import { randomBytes } from 'node:crypto';
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { parseSnapshot, SnapshotError, type Snapshot } from './snapshot.js';

/** What the state file needs from the store: its bytes, a counter that moves on every change, and a way back. */
export interface Snapshottable {
  readonly version: number;
  /** The state as the file's bytes (snapshot.ts's encodeState), in pieces that are never changed afterwards. */
  stateFileParts(): Buffer[];
  /** Returns to a state saved earlier, after a save of later changes failed. The same snapshot may come again: copy from it, keep nothing of it. */
  restore(snapshot: Snapshot): void;
}

/** A state file that cannot be used, read or written; the message names the file and the cause. */
export class StateFileError extends Error {}

/**
 * A write refused because the server no longer holds its data file's lock
 * (lock.ts); the message says what happened to the lock. Every later write
 * is refused too, so the cause is told once, by the lock, not once a write.
 */
export class LockLostError extends StateFileError {}

/** The saved state and the bytes it was read from, or null when the file does not exist yet. */
export interface SavedState {
  snapshot: Snapshot;
  bytes: Buffer;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export async function readState(path: string): Promise<SavedState | null> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new StateFileError(`cannot read ${path}: ${(error as Error).message}`);
  }
  return { snapshot: parseState(bytes, path), bytes };
}

/** The saved state, or null when the file does not exist yet. */
export async function loadState(path: string): Promise<Snapshot | null> {
  return (await readState(path))?.snapshot ?? null;
}

function parseState(bytes: Buffer, path: string): Snapshot {
  let json: unknown;
  try {
    json = JSON.parse(utf8.decode(bytes));
  } catch (error) {
    throw new StateFileError(`${path} is not valid JSON (${(error as Error).message})`);
  }
  try {
    return parseSnapshot(json);
  } catch (error) {
    if (error instanceof SnapshotError) throw new StateFileError(`${path} is not a valid svc state file: ${error.message}`);
    throw error;
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
  /** The bytes the file holds now, when it holds this state: what a failed save returns to. */
  durable?: Buffer | null;
  /** Told once per failed save (but for a LockLostError), and when a save landed but its directory could not be synced. */
  warn?: (message: string) => void;
  /** Settles just before each write replaces the file; a rejection (a StateFileError) fails that write. */
  verify?: () => Promise<void>;
}

interface Waiter {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

const DONE = Promise.resolve();

/**
 * Saves state atomically with group commit. At most one write runs at a
 * time; every `save()` that arrives while one runs joins the next write,
 * which snapshots the state when it starts and so covers all of them. A
 * caller's promise therefore resolves only after a write that began after
 * its change, and a burst of N mutations costs two writes, not N.
 *
 * When a write fails, memory goes back to the bytes of the last write that
 * succeeded: the failed write's changes are undone, and so are those queued
 * for the next write, which were made on top of them. Every caller of
 * either is rejected; nothing they changed is served any longer.
 */
export class StateFile {
  private current: Promise<void> | null = null;
  private next: Waiter | null = null;
  /** The pieces of the last write that succeeded: held as they are, since a copy of a large file would cost every save. */
  private durable: Buffer[] | null;
  /** `durable` parsed, kept while it stays the durable state: a full disk fails write after write, and parsing is the costly part. */
  private durableSnapshot: Snapshot | null = null;
  private savedVersion: number;
  private tempCounter = 0;
  private readonly warn: (message: string) => void;
  private readonly verify: () => Promise<void>;

  constructor(
    readonly path: string,
    private readonly state: Snapshottable,
    options: StateFileOptions = {},
  ) {
    this.durable = options.durable ? [options.durable] : null;
    this.savedVersion = this.durable ? state.version : -1;
    this.warn = options.warn ?? (() => {});
    this.verify = options.verify ?? (() => DONE);
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

  /** Waits for pending writes, then saves what is still unsaved (lastUsedAt is only saved lazily). */
  async flush(): Promise<void> {
    while (this.current) await this.current.catch(() => {});
    if (this.state.version !== this.savedVersion) await this.save();
  }

  private startWrite(): Promise<void> {
    const version = this.state.version;
    const parts = this.state.stateFileParts();
    const write = this.writeAtomically(Buffer.concat(parts)).then(
      () => {
        this.durable = parts;
        this.durableSnapshot = null;
        this.savedVersion = version;
        this.current = null;
        const waiting = this.next;
        this.next = null;
        if (waiting) this.startWrite().then(waiting.resolve, waiting.reject);
      },
      (error: StateFileError) => {
        this.current = null;
        const waiting = this.next;
        this.next = null;
        // Rejections only queue their callers' continuations: memory is back before any of them runs.
        waiting?.reject(error);
        if (this.durable) this.state.restore((this.durableSnapshot ??= parseState(Buffer.concat(this.durable), this.path)));
        if (!(error instanceof LockLostError)) this.warn(`${error.message}; the changes since the last save were undone`);
        throw error;
      },
    );
    this.current = write;
    return write;
  }

  /**
   * Temp file in the same directory, fsync, rename over the old file, fsync the directory so the rename itself
   * survives a crash. The rename is what another server would load, so `verify` runs as close before it as it can.
   */
  private async writeAtomically(bytes: Buffer): Promise<void> {
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
    // The file now holds the new state, whatever happens next: undoing it in memory would make
    // memory disagree with what a restart loads. A directory that cannot be synced is only reported.
    try {
      const directory = await open(dir, 'r');
      try {
        await directory.sync();
      } finally {
        await directory.close();
      }
    } catch (error) {
      this.warn(`saved ${this.path}, but could not sync its directory: ${describeFsError(error as NodeJS.ErrnoException)}`);
    }
  }
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
