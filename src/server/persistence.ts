import { randomBytes } from 'node:crypto';
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { parseSnapshot, SnapshotError, type Snapshot } from './snapshot.js';

/** What the state file needs from the store: a snapshot, and a counter that moves on every change. */
export interface Snapshottable {
  readonly version: number;
  toSnapshot(): Snapshot;
  /** The snapshot already as the file's bytes, for a state that can make them cheaper than JSON.stringify can. */
  stateFileBytes?(): Buffer;
}

/** A state file that cannot be used; start-up stops and the file is not touched. */
export class StateFileError extends Error {}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The saved state, or null when the file does not exist yet. */
export async function loadState(path: string): Promise<Snapshot | null> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new StateFileError(`cannot read ${path}: ${(error as Error).message}`);
  }
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

interface Waiter {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Saves state atomically with group commit. At most one write runs at a
 * time; every `save()` that arrives while one runs joins the next write,
 * which snapshots the state when it starts and so covers all of them. A
 * caller's promise therefore resolves only after a write that began after
 * its change, and a burst of N mutations costs two writes, not N.
 */
export class StateFile {
  private inFlight: Promise<void> | null = null;
  private next: Waiter | null = null;
  private savedVersion = -1;
  private tempCounter = 0;

  constructor(
    readonly path: string,
    private readonly state: Snapshottable,
  ) {}

  save(): Promise<void> {
    if (!this.inFlight) return this.startWrite();
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

  /** Waits for pending writes, then saves what is still unsaved (lastUsedAt is only saved lazily). */
  async flush(): Promise<void> {
    while (this.inFlight) await this.inFlight;
    if (this.state.version !== this.savedVersion) await this.save();
  }

  private startWrite(): Promise<void> {
    const version = this.state.version;
    const bytes = this.state.stateFileBytes?.() ?? `${JSON.stringify(this.state.toSnapshot(), null, 2)}\n`;
    const write = this.writeAtomically(bytes).then(() => {
      this.savedVersion = version;
    });
    const settle = () => {
      this.inFlight = null;
      const waiting = this.next;
      this.next = null;
      if (waiting) this.startWrite().then(waiting.resolve, waiting.reject);
    };
    this.inFlight = write.then(settle, settle);
    return write;
  }

  /** Temp file in the same directory, fsync, rename over the old file, fsync the directory so the rename itself survives a crash. */
  private async writeAtomically(bytes: string | Buffer): Promise<void> {
    const dir = dirname(this.path);
    const temp = join(dir, `.${basename(this.path)}.${process.pid}.${++this.tempCounter}.${randomBytes(4).toString('hex')}.tmp`);
    try {
      const file = await open(temp, 'wx', 0o600);
      try {
        await file.writeFile(bytes);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temp, this.path);
      const directory = await open(dir, 'r');
      try {
        await directory.sync();
      } finally {
        await directory.close();
      }
    } catch (error) {
      // After a successful rename the temp name is gone and this does nothing.
      await unlink(temp).catch(() => {});
      throw new StateFileError(`cannot write ${this.path}: ${describe(error as NodeJS.ErrnoException)}`);
    }
  }
}

/** The cause in words, without the temp file's name, which means nothing to the operator. */
function describe(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ENOENT':
      return 'its directory does not exist';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'the file system is read-only';
    case 'ENOSPC':
      return 'no space left on the device';
    default:
      return error.message;
  }
}
