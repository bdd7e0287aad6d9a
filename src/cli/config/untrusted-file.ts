/**
 * Reading a file that someone other than the user may have put there: a
 * project's `.svc-profile`, the config file, its lock (docs/contract.md
 * §C1). Never through a symbolic link (O_NOFOLLOW, and lstat where the
 * platform has no such flag), never waiting (O_NONBLOCK: a FIFO would
 * otherwise hold the command at its open, past Ctrl-C), a regular file
 * only, and no more than `maxBytes`. What it holds is the caller's to
 * check, and never to echo before it passes.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, type Stats } from 'node:fs';

/** Why the file is not one to read, in words that name no content: "is a symbolic link", "is a FIFO". */
export class UntrustedFileError extends Error {
  constructor(readonly problem: string) {
    super(problem);
    this.name = 'UntrustedFileError';
  }
}

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/** The file's text and what fstat said of it; ENOENT and other failures to open are thrown as they are. */
export function readUntrusted(path: string, maxBytes: number): { text: string; stats: Stats } {
  if (NOFOLLOW === 0 && lstatSync(path).isSymbolicLink()) throw new UntrustedFileError('is a symbolic link');
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw new UntrustedFileError('is a symbolic link');
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new UntrustedFileError(`is ${fileKind(stats)}, not a regular file`);
    if (stats.size > maxBytes) throw new UntrustedFileError(`is larger than ${maxBytes} bytes`);
    // Sized by fstat, with a byte more to see the end: a buffer of the bound itself (16 MiB for the config) was
    // zeroed on every read, 3 ms each, four reads a command. A file that grew since fstat gets a larger one, up
    // to a byte past the bound, which catches a file that grew past it.
    let buffer = Buffer.allocUnsafe(Math.min(stats.size, maxBytes) + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (length > maxBytes) throw new UntrustedFileError(`is larger than ${maxBytes} bytes`);
        const larger = Buffer.allocUnsafe(Math.min(length * 2, maxBytes + 1));
        buffer.copy(larger, 0, 0, length);
        buffer = larger;
      }
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
    if (length > maxBytes) throw new UntrustedFileError(`is larger than ${maxBytes} bytes`);
    return { text: buffer.subarray(0, length).toString('utf8'), stats };
  } finally {
    closeSync(fd);
  }
}

/** What a file that is not a regular one is, in words. */
export function fileKind(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'a regular file';
}
