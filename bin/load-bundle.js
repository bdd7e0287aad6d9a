// svc's bundle is one script of about 700 KB. V8 compiles a function the
// first time it runs, and a command runs a large part of the bundle: about
// half of it for `svc keys list`, parsed and compiled anew on every run,
// costs more than the rest of what svc adds to a bare undici request.
// Node's own compile cache (module.enableCompileCache) is made as a file is
// compiled, before it runs, so it holds only the bundle's top level.
//
// So svc keeps V8's compiled code itself, in two kinds of cache file:
// - the start cache, made right after the bundle's top level ran, for any
//   command that has no cache of its own yet;
// - one per command (commandKey), made after that command first succeeded,
//   holding all the code it ran. A later run of it compiles almost nothing.
'use strict';

const { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } = process.getBuiltinModule('node:fs');
const { dirname, join } = process.getBuiltinModule('node:path');

/**
 * The program's options that take a value (src/cli/program.ts), whose value
 * is not a command word; test/docs/code-cache.test.ts checks the two agree.
 */
const VALUE_OPTIONS = new Set(['--base-url', '--profile', '--timeout', '--max-wait']);

/**
 * Which command `argv` runs, as far as choosing a cache goes: its first two
 * command words ("keys-list"), or "svc" for none. A wrong guess costs only
 * speed: the cache is that of another command or none.
 */
function commandKey(argv) {
  const words = [];
  for (let i = 0; i < argv.length && words.length < 2; i++) {
    const word = argv[i];
    if (word === '--') break;
    if (word.startsWith('-')) {
      if (VALUE_OPTIONS.has(word)) i++;
      continue;
    }
    if (!/^[a-z_][a-z0-9_-]{0,31}$/.test(word)) break;
    words.push(word);
  }
  return words.length === 0 ? 'svc' : words.join('-');
}

/** The source's name in the probe cache (see loadBundle). */
const PROBE = 'svc-v8-flags-probe';

/**
 * Loads the CommonJS file `file` with V8's code cache kept in `cacheDir`,
 * for the command `command` (commandKey). Returns its exports, and
 * keepCompiledCode, which the caller runs once the command has succeeded.
 */
function loadBundle(file, cacheDir, command) {
  // The bundle is ASCII (scripts/build.mjs checks), so Latin-1 reads it as
  // UTF-8 would, without decoding 700 KB of it on every command.
  const source = readFileSync(file, 'latin1');
  // V8 checks a cache against the source's length, not its content: the name
  // carries what changes when the bundle does. npm gives every installed file
  // the same mtime, so svc's version is part of it too.
  const { size, mtimeMs } = statSync(file);
  const { version } = JSON.parse(readFileSync(join(dirname(file), '..', 'package.json'), 'utf8'));
  const bundleId = `main-${version}-${size}-${Math.trunc(mtimeMs)}-${process.version}-${process.arch}${flagsSuffix()}`;
  const startCache = `${bundleId}.v8`;
  const commandCache = `${bundleId}.${command}.v8`;
  const usable = ownDirectory(cacheDir);
  const ownCache = usable ? readCache(join(cacheDir, commandCache)) : undefined;
  const cachedData = ownCache ?? (usable ? readCache(join(cacheDir, startCache)) : undefined);
  const vm = process.getBuiltinModule('node:vm');
  // The same wrapper and arguments Node's CommonJS loader gives a file.
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  const script = new vm.Script(wrapped, { filename: file, cachedData });
  const taken = cachedData !== undefined && !script.cachedDataRejected;
  // V8 takes a cache only under the flags it was made with, and a command
  // changes one (src/client/wasm-tiering.ts). A cache of a one-character
  // script, made now, tells at the end whether the flags are as they are now.
  const probe = usable && !(taken && ownCache !== undefined) ? new vm.Script('0', { filename: PROBE }).createCachedData() : undefined;
  const module = { exports: {} };
  // This file's own require: bin/ and dist/ are siblings in one package, so
  // the bundle's one package it requires (the keyring binding) resolves the
  // same from either; Module.createRequire would load node:module for it.
  script.runInThisContext().call(module.exports, module.exports, require, module, file, dirname(file));
  if (usable && !taken) save(cacheDir, bundleId, startCache, script.createCachedData());

  /**
   * Keeps the code the command compiled as its own cache, unless it ran from
   * that cache already. `restoreFlags` puts back the V8 flags the command
   * changed; if they did not all come back, nothing is kept, since V8 would
   * refuse the cache on every later run.
   */
  function keepCompiledCode(restoreFlags) {
    if (probe === undefined) return;
    restoreFlags();
    // Another script of the same length, which V8 checks a cache against:
    // the same one would come from V8's memory without a look at the cache.
    if (new vm.Script('1', { filename: PROBE, cachedData: probe }).cachedDataRejected) return;
    save(cacheDir, bundleId, commandCache, script.createCachedData());
    pruneCommandCaches(cacheDir, bundleId);
  }
  return { exports: module.exports, keepCompiledCode };
}

/**
 * V8 takes a cache only under the flags it was made with. Flags given to
 * node, on its command line or in NODE_OPTIONS, get caches of their own:
 * otherwise each run under other flags would replace the last one's.
 */
function flagsSuffix() {
  const flags = [...process.execArgv.filter((arg) => arg.startsWith('--')), process.env.NODE_OPTIONS ?? ''].join(' ').trim();
  if (flags === '') return '';
  // FNV-1a: a name, not a secret; node:crypto would cost every start more than the rest of this file.
  let hash = 0x811c9dc5;
  for (let i = 0; i < flags.length; i++) hash = Math.imul(hash ^ flags.charCodeAt(i), 0x01000193);
  return `-${(hash >>> 0).toString(16).padStart(8, '0')}`;
}

function readCache(path) {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
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

/** Command caches kept per bundle, the most recently written: each is about as large as the bundle. */
const COMMAND_CACHES = 16;

/**
 * Writes the cache `name` of the bundle `bundleId`. Caches of other bundles
 * that were written long ago go: each svc or Node upgrade leaves its caches
 * behind, while two installs in use side by side (a global svc and an npx
 * one) each keep theirs.
 */
function save(dir, bundleId, name, data) {
  const temporary = join(dir, `${name}.${process.pid}`);
  try {
    writeFileSync(temporary, data, { mode: 0o600 });
    renameSync(temporary, join(dir, name));
  } catch {
    // A cache that cannot be written (a full disk) only costs the next start
    // its speed; what part of it was written goes.
    try {
      unlinkSync(temporary);
    } catch {
      // Never made, or gone.
    }
    return;
  }
  try {
    const staleBefore = Date.now() - STALE_DAYS * 86_400_000;
    for (const other of readdirSync(dir)) {
      if (!other.startsWith(`${bundleId}.`) && /^main-.*\.v8$/.test(other) && statSync(join(dir, other)).mtimeMs < staleBefore) unlinkSync(join(dir, other));
    }
  } catch {
    // Another svc removed it first, or it cannot be: it costs only disk.
  }
}

/** Leaves this bundle COMMAND_CACHES command caches at most, removing the least recently written. */
function pruneCommandCaches(dir, bundleId) {
  try {
    const caches = readdirSync(dir)
      .filter((name) => name.startsWith(`${bundleId}.`) && name.endsWith('.v8') && name !== `${bundleId}.v8`)
      .map((name) => ({ name, written: statSync(join(dir, name)).mtimeMs }))
      .sort((a, b) => b.written - a.written);
    for (const { name } of caches.slice(COMMAND_CACHES)) unlinkSync(join(dir, name));
  } catch {
    // As for save: a cache left behind costs only disk.
  }
}

module.exports = { loadBundle, commandKey };
