// Node 22.1 and later keep V8's compiled code between runs themselves
// (module.enableCompileCache, turned on by bin/svc.js). Node 20 has no such
// cache, so it would parse the whole bundle on every command, the largest
// part of what svc adds to a bare undici request there. On Node 20 bin/svc.js
// loads the bundle through here instead: compiled by vm.Script with V8's code
// cache, kept in the directory Node's own cache would use.
'use strict';

const { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } = process.getBuiltinModule('node:fs');
const { dirname, join } = process.getBuiltinModule('node:path');

/** The exports of the CommonJS file `file`, compiled with the code cache kept in `cacheDir`. */
function loadWithCodeCache(file, cacheDir) {
  // The bundle is ASCII (scripts/build.mjs checks), so Latin-1 reads it as
  // UTF-8 would, without decoding 700 KB of it on every command.
  const source = readFileSync(file, 'latin1');
  // V8 checks a cache against the source's length, not its content: the name
  // carries what changes when the bundle does. npm gives every installed file
  // the same mtime, so svc's version is part of it too.
  const { size, mtimeMs } = statSync(file);
  const { version } = JSON.parse(readFileSync(join(dirname(file), '..', 'package.json'), 'utf8'));
  const name = `main-${version}-${size}-${Math.trunc(mtimeMs)}-${process.version}-${process.arch}.v8`;
  const usable = ownDirectory(cacheDir);
  let cachedData;
  if (usable) {
    try {
      cachedData = readFileSync(join(cacheDir, name));
    } catch {
      cachedData = undefined;
    }
  }
  // The same wrapper and arguments Node's CommonJS loader gives a file.
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  const script = new (process.getBuiltinModule('node:vm').Script)(wrapped, { filename: file, cachedData });
  const module = { exports: {} };
  // This file's own require: bin/ and dist/ are siblings in one package, so
  // the bundle's one package it requires (the keyring binding) resolves the
  // same from either; Module.createRequire would load node:module for it.
  script.runInThisContext().call(module.exports, module.exports, require, module, file, dirname(file));
  // Made now, before any command runs: a V8 flag a command sets (the
  // transport's --liftoff-only) would make V8 refuse the cache next time.
  if (usable && (cachedData === undefined || script.cachedDataRejected)) save(cacheDir, name, script.createCachedData());
  return module.exports;
}

/**
 * Whether `dir` (created if missing) is a directory of this user's that no
 * one else may write to: only then is code read from it. Anyone who could
 * write there could make svc run their code.
 */
function ownDirectory(dir) {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stat = lstatSync(dir);
    return stat.isDirectory() && stat.uid === process.getuid() && (stat.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/** Days a cache of another bundle (an older svc, another Node) is kept after it was written. */
const STALE_DAYS = 30;

/**
 * Writes the cache. Caches of other bundles that were written long ago go:
 * each svc or Node upgrade leaves one behind, while two installs in use side
 * by side (a global svc and an npx one) each keep theirs.
 */
function save(dir, name, data) {
  try {
    const temporary = join(dir, `${name}.${process.pid}`);
    writeFileSync(temporary, data, { mode: 0o600 });
    renameSync(temporary, join(dir, name));
    const staleBefore = Date.now() - STALE_DAYS * 86_400_000;
    for (const other of readdirSync(dir)) {
      if (other !== name && /^main-.*\.v8$/.test(other) && statSync(join(dir, other)).mtimeMs < staleBefore) unlinkSync(join(dir, other));
    }
  } catch {
    // A cache that cannot be written only costs the next start its speed.
  }
}

module.exports = { loadWithCodeCache };
