/**
 * --to-file: the secret as a .env line, `SVC_API_KEY=<secret>`, in a file
 * of mode 0600 that appears whole or not at all. The content is written to
 * a temp file beside it (O_EXCL, 0600), fsynced, then put in place: by a
 * hard link, which fails if the path exists, so a file there is never
 * overwritten without --force; with --force by a rename over it. A symbolic
 * link at the path is refused, never followed: the secret goes where the
 * path says. With --force only the SVC_API_KEY line of an existing file is
 * replaced and its other lines kept, at its mode without any bit beyond
 * 0600.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  linkSync,
  lstatSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { workingDirectory } from '../terminal/io.js';
import { DeliveryStepError } from '../errors/delivery-failed.js';

/** An existing line for the variable: `SVC_API_KEY=…`, optionally `export`ed, as shells and dotenv loaders read it. */
const KEY_LINE = /^\s*(export\s+)?SVC_API_KEY\s*=/;

/**
 * Why the path cannot take the secret, as far as can be told before a key
 * is made (the write checks again): null when it can. A file there without
 * --force, a link, or no such directory would fail only after the create,
 * with the secret printed instead.
 */
export function fileTargetProblem(path: string, force: boolean): string | null {
  // resolve() of a relative path reads the working directory, which fails once it is removed.
  if (!isAbsolute(path) && workingDirectory() === undefined) return `${path} is relative, and the working directory no longer exists: give an absolute path`;
  const target = resolve(path);
  let stats;
  try {
    stats = lstatSync(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return failure(error, target).reason;
    return isDirectory(dirname(target)) ? null : missingDirectory(target);
  }
  if (stats.isSymbolicLink()) return symlinkRefused(target).reason;
  if (!stats.isFile()) return notRegular(target);
  if (!force) return exists(target);
  return isOwn(stats.uid) ? null : othersFile(target);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Writes the secret's line to `path`; returns the absolute path written. */
export function deliverToFile(path: string, secret: string, force: boolean): string {
  const target = resolve(path);
  const existing = force ? readExisting(target) : refuseExisting(target);
  const text = existing === null ? `SVC_API_KEY=${secret}\n` : withKeyLine(existing.text, secret);
  const mode = existing === null ? 0o600 : existing.mode & 0o600;
  const temp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  writeTemp(temp, text, mode, target);
  try {
    // link refuses an existing path (a file made meanwhile included); rename replaces it, never writing through a link.
    if (existing === null) linkSync(temp, target);
    else renameSync(temp, target);
  } catch (error) {
    throw failure(error, target);
  } finally {
    removeQuietly(temp);
  }
  syncDirectory(dirname(target));
  return target;
}

function refuseExisting(target: string): null {
  let stats;
  try {
    stats = lstatSync(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw failure(error, target);
  }
  if (stats.isSymbolicLink()) throw symlinkRefused(target);
  throw new DeliveryStepError(exists(target));
}

const notRegular = (target: string) => `${target} is not a regular file`;
const othersFile = (target: string) => `${target} belongs to another user, and svc does not replace another user's file`;
/** Windows has no uids to compare. */
const isOwn = (uid: number) => process.getuid === undefined || uid === process.getuid();
const exists = (target: string) => `${target} already exists, and svc writes over a file only with --force`;
const missingDirectory = (target: string) => `the directory ${dirname(target)} does not exist`;

/** The file to update, read without following a link; null when there is none. */
function readExisting(target: string): { text: string; mode: number } | null {
  let fd: number;
  try {
    // Non-blocking, so that a FIFO at the path cannot hold svc (and the secret) waiting for a writer.
    fd = openSync(target, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw symlinkRefused(target);
    throw failure(error, target);
  }
  try {
    const stats = fstatSync(fd);
    // Without O_NOFOLLOW (Windows) a link is caught here.
    if (lstatSync(target).isSymbolicLink()) throw symlinkRefused(target);
    if (!stats.isFile()) throw new DeliveryStepError(notRegular(target));
    if (!isOwn(stats.uid)) throw new DeliveryStepError(othersFile(target));
    return { text: readFileSync(fd, 'utf8'), mode: stats.mode };
  } finally {
    closeSync(fd);
  }
}

/** The file's lines with the first SVC_API_KEY line holding the new secret (a later one would win in most loaders, so it goes), or one appended. */
function withKeyLine(text: string, secret: string): string {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  const out: string[] = [];
  let placed = false;
  for (const line of lines) {
    const match = KEY_LINE.exec(line);
    if (match === null) out.push(line);
    else if (!placed) {
      out.push(`${match[1] ?? ''}SVC_API_KEY=${secret}`);
      placed = true;
    }
  }
  if (!placed) out.push(`SVC_API_KEY=${secret}`);
  return `${out.join(eol)}${eol}`;
}

function writeTemp(temp: string, text: string, mode: number, target: string): void {
  let fd: number;
  try {
    fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), mode);
  } catch (error) {
    throw failure(error, target);
  }
  try {
    // The umask may only take bits away; this states the mode exactly.
    fchmodSync(fd, mode);
    const bytes = Buffer.from(text, 'utf8');
    for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    removeQuietly(temp);
    throw failure(error, target);
  }
  closeSync(fd);
}

/** The rename or link itself lasts only once the directory is on disk; a system that cannot fsync a directory (Windows) has it done already. */
function syncDirectory(directory: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(directory, constants.O_RDONLY);
    fsyncSync(fd);
  } catch {
    // The file is in place either way; this only hastens its durability.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Gone already: renamed into place.
  }
}

function symlinkRefused(target: string): DeliveryStepError {
  return new DeliveryStepError(`${target} is a symbolic link, and svc does not write through one (give the path of the file itself)`);
}

function failure(error: unknown, target: string): DeliveryStepError {
  const { code, message } = error as NodeJS.ErrnoException;
  if (error instanceof DeliveryStepError) return error;
  if (code === 'EEXIST') return new DeliveryStepError(exists(target));
  if (code === 'ENOENT' || code === 'ENOTDIR') return new DeliveryStepError(missingDirectory(target));
  if (code === 'EACCES' || code === 'EPERM') return new DeliveryStepError(`svc may not write ${target} (${code})`);
  if (code === 'EISDIR') return new DeliveryStepError(`${target} is a directory`);
  return new DeliveryStepError(`writing ${target} failed: ${message}`);
}
