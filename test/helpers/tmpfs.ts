/**
 * A small tmpfs mounted on a fresh temp directory, for save failures that
 * are real: a disk that fills up, a mount made read-only. Mounting needs
 * root; `canMount` says whether the tests that need it can run here.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmdirSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const canMount = process.getuid?.() === 0;

export interface Tmpfs {
  dir: string;
  /** Writes a filler file until the file system has not one byte left. */
  fill(): void;
  /** Removes the filler. */
  free(): void;
  readOnly(): void;
  readWrite(): void;
  /** Unmounts and removes the mount point; safe to call twice. */
  unmount(): void;
}

export function mountTmpfs(size: string): Tmpfs {
  const dir = mkdtempSync(join(tmpdir(), 'svc-tmpfs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0755`, 'tmpfs', dir]);
  const filler = join(dir, 'filler');
  let mounted = true;
  return {
    dir,
    fill() {
      const fd = openSync(filler, 'a');
      try {
        writeUntilFull(fd, Buffer.alloc(4096, 0x78));
        // Then byte by byte, for whatever a partly used page still holds.
        writeUntilFull(fd, Buffer.from('x'));
      } finally {
        closeSync(fd);
      }
    },
    free() {
      rmSync(filler, { force: true });
    },
    readOnly() {
      execFileSync('mount', ['-o', 'remount,ro', dir]);
    },
    readWrite() {
      execFileSync('mount', ['-o', 'remount,rw', dir]);
    },
    unmount() {
      if (!mounted) return;
      mounted = false;
      // Lazy, so a file a failed test left open cannot keep the mount (and the test run) hanging.
      execFileSync('umount', ['-l', dir]);
      rmdirSync(dir);
    },
  };
}

function writeUntilFull(fd: number, chunk: Buffer): void {
  for (;;) {
    try {
      writeSync(fd, chunk);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOSPC') return;
      throw error;
    }
  }
}
