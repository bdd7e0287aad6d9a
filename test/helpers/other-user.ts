/**
 * The built svc where another user can run it (issue 46): a clone under a
 * directory only its owner may enter (/root, a 0700 home) holds a bin/svc.js
 * that `nobody` cannot read, nor, when node was installed there too (nvm,
 * CI's unpacked Node lines), a node it can run; setpriv would then fail, or
 * find another node on PATH and test that one. So the package's runnable
 * part (bin/, dist/, package.json: the bundle needs nothing from
 * node_modules for the commands run as another user) is copied into a
 * directory of `parent`, every level of which others may enter, and node
 * with it when its own directory is closed to them.
 */
import { chmodSync, copyFileSync, cpSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { SVC_BIN } from './reference-server.mjs';

/** Every directory from `path` up to the root may be entered by any user. */
function openToAll(path: string): boolean {
  for (let dir = resolve(path); ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return false;
    if (dirname(dir) === dir) return true;
  }
}

/** `node` and `svc` (bin/svc.js) that any user can run, copied into `parent` (open to all; removed with it). */
export function svcForOtherUsers(parent: string): { node: string; svc: string } {
  if (!openToAll(parent)) throw new Error(`${parent} must be open to other users (mode o+x on it and every directory above it)`);
  const root = join(dirname(SVC_BIN), '..');
  const copy = join(parent, 'svc-package');
  mkdirSync(copy, { mode: 0o755 });
  for (const part of ['bin', 'dist']) cpSync(join(root, part), join(copy, part), { recursive: true });
  copyFileSync(join(root, 'package.json'), join(copy, 'package.json'));
  // A clone made under umask 077 has files only its owner may read.
  readableByAll(copy);
  let node = process.execPath;
  if (!openToAll(dirname(node))) {
    node = join(copy, 'node');
    copyFileSync(process.execPath, node);
    chmodSync(node, 0o755);
  }
  return { node, svc: join(copy, 'bin', 'svc.js') };
}

function readableByAll(dir: string): void {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) readableByAll(path);
    else chmodSync(path, 0o644);
  }
}
