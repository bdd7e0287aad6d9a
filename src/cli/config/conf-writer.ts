import { copyFileSync, linkSync, readFileSync, renameSync } from 'node:fs';
import { basename, dirname, extname } from 'node:path';
import { removeQuietly } from './file.js';

/**
 * Lands a new config file through conf, the store svc keeps its profiles
 * in, without trusting the write with the only copy: conf's writer
 * (atomically) renames its temp file into place even when a nearly full
 * disk cut the write short. So the old file is kept first as a hard link
 * (no room needed), the new one is read back, and anything but the bytes
 * meant puts the old file back and fails as a full disk. Loaded only by a
 * change: reading a profile never runs conf.
 */
export type ConfClass = typeof import('conf').default;

/** conf, loaded before the lock is taken: loading it is the slow part, and others may be waiting. */
export async function loadConf(): Promise<ConfClass> {
  return (await import('conf')).default;
}

export function writeThroughConf(Conf: ConfClass, target: string, document: Record<string, unknown>, expected: string): void {
  const previous = `${target}.previous`;
  removeQuietly(previous);
  const kept = keepPrevious(target, previous);
  try {
    const extension = extname(target);
    const conf = new Conf<Record<string, unknown>>({
      cwd: dirname(target),
      configName: basename(target, extension),
      fileExtension: extension.slice(1),
      projectName: 'svc',
      configFileMode: 0o600,
    });
    conf.store = document;
    if (readFileSync(target, 'utf8') !== expected) {
      throw Object.assign(new Error('the new config file was cut short'), { code: 'ENOSPC' });
    }
  } catch (error) {
    if (kept) renameSync(previous, target);
    else removeQuietly(target);
    throw error;
  } finally {
    removeQuietly(previous);
  }
}

/** The file as it is, under a second name; false when there was none yet. A file system without hard links gets a copy. */
function keepPrevious(target: string, previous: string): boolean {
  try {
    linkSync(target, previous);
    return true;
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === 'ENOENT') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EXDEV') throw error;
  }
  copyFileSync(target, previous);
  return true;
}
