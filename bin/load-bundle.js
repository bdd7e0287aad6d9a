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
// Each file starts with a SHA-1 of the rest: V8 checks a cache's flags and
// length but not its content, and a damaged one crashes the process.
'use strict';

const { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, unlinkSync, utimesSync, writeFileSync } =
  process.getBuiltinModule('node:fs');
const { dirname, join } = process.getBuiltinModule('node:path');

/**
 * The program's options that take a value (src/cli/program/program.ts), whose value
 * is not a command word; test/docs/code-cache.test.ts checks the two agree.
 */
const VALUE_OPTIONS = new Set(['--base-url', '--profile', '--timeout', '--max-wait']);

/**
 * The commands whose next word is a subcommand (`keys list`); after any
 * other the next word is an argument (`run --name deploy-42`), and a cache
 * per argument would be a new file for every name, duration or path given.
 * test/docs/code-cache.test.ts checks these against the program.
 */
const GROUPS = new Set(['keys', 'profile', '__complete']);

/**
 * Which command `argv` runs, as far as choosing a cache goes: its command
 * word, and a group's subcommand ("keys-list"), or "svc" for none. A wrong guess costs only
 * speed: the cache is that of another command or none. A request for help
 * or the version has none: its run would make the command's cache out of
 * that code alone. A group of short flags (`-qh`) counts by its letters.
 */
function commandKey(argv) {
  const words = [];
  let ended = false;
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    if (word === '--') break;
    if (word === '--help' || word === '--version' || /^-[^-]*[hV]/.test(word)) return undefined;
    if (word.startsWith('-')) {
      if (VALUE_OPTIONS.has(word)) i++;
      continue;
    }
    if (words.length === 0 && word === 'help') return undefined;
    if (!ended && (words.length === 0 || (words.length === 1 && GROUPS.has(words[0]))) && /^[a-z_][a-z0-9_-]{0,31}$/.test(word)) words.push(word);
    else ended = true;
  }
  return words.length === 0 ? 'svc' : words.join('-');
}

/** The source's name in the probe cache (see loadBundle). */
const PROBE = 'svc-v8-flags-probe';

/**
 * Loads the CommonJS file `file` with V8's code cache kept in `cacheDir`,
 * for the command `command` (commandKey; undefined: none of its own).
 * Returns its exports, and keepCompiledCode, which the caller runs once the
 * command has succeeded.
 */
function loadBundle(file, cacheDir, command) {
  // V8 checks a cache against the source's length, not its content, and
  // runs the code a cache holds: the name carries what changes whenever the
  // bundle's file does. npm gives every file it installs the same mtime, but
  // a new inode, and any write sets the change time. Both are read from the
  // file read: a bundle replaced meanwhile must not name the cache of this one.
  const fd = openSync(file, 'r');
  let source;
  let unchanged;
  let stat;
  try {
    stat = fstatSync(fd, { bigint: true });
    // The bundle is ASCII (scripts/build.mjs checks), so Latin-1 reads it as
    // UTF-8 would, without decoding 700 KB of it on every command.
    source = readFileSync(fd, 'latin1');
    unchanged = fstatSync(fd, { bigint: true }).ctimeNs === stat.ctimeNs;
  } finally {
    closeSync(fd);
  }
  const { version } = JSON.parse(readFileSync(join(dirname(file), '..', 'package.json'), 'utf8'));
  const bundleId = `main-${version}-${stat.size}-${stat.ino}-${stat.ctimeNs}-${process.version}-${process.arch}${flagsSuffix()}`;
  const startCache = `${bundleId}.v8`;
  const commandCache = command === undefined ? undefined : `${bundleId}.${command}.v8`;
  // Written to while it was read: what was read may be neither version, and no cache is made of it.
  const usable = unchanged && ownDirectory(cacheDir);
  const ownCache = usable && commandCache !== undefined ? readCache(cacheDir, commandCache, [startCache]) : undefined;
  const cachedData = ownCache ?? (usable ? readCache(cacheDir, startCache) : undefined);
  const vm = process.getBuiltinModule('node:vm');
  // The same wrapper and arguments Node's CommonJS loader gives a file.
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  const script = new vm.Script(wrapped, { filename: file, cachedData });
  const taken = cachedData !== undefined && !script.cachedDataRejected;
  // V8 takes a cache only under the flags it was made with, and a command
  // changes one (src/client/wasm-tiering.ts). A cache of a one-character
  // script, made now, tells at the end whether the flags are as they are now.
  const probe = usable && commandCache !== undefined && !(taken && ownCache !== undefined) ? new vm.Script('0', { filename: PROBE }).createCachedData() : undefined;
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
  // FNV-1a: a short name for what is usually a few words, not a secret.
  let hash = 0x811c9dc5;
  for (let i = 0; i < flags.length; i++) hash = Math.imul(hash ^ flags.charCodeAt(i), 0x01000193);
  return `-${(hash >>> 0).toString(16).padStart(8, '0')}`;
}

/** Bytes of the SHA-1 at the start of each cache file. */
const DIGEST_BYTES = 20;

/** A larger file is not a cache of svc's: they are about as large as the bundle. */
const MAX_CACHE_BYTES = 64 * 1024 * 1024;

const digestOf = (data) => process.getBuiltinModule('node:crypto').createHash('sha1').update(data).digest();

/**
 * The V8 data of the cache file `name` in `dir`, if it is a regular file
 * whose content is whole; else undefined. Opened without following a link
 * or waiting on a pipe: a link to /dev/zero or a FIFO in its place would
 * otherwise fill memory or hang svc. Its `companions` count as used with it.
 */
function readCache(dir, name, companions = []) {
  let fd;
  try {
    fd = openSync(join(dir, name), constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size <= DIGEST_BYTES || stat.size > MAX_CACHE_BYTES) return undefined;
    const content = Buffer.allocUnsafe(stat.size);
    let read = 0;
    for (let n = -1; read < stat.size && n !== 0; read += n) n = readSync(fd, content, read, stat.size - read, read);
    if (read !== stat.size) return undefined;
    const data = content.subarray(DIGEST_BYTES);
    if (!digestOf(data).equals(content.subarray(0, DIGEST_BYTES))) return undefined;
    // In use: the days a cache is kept, and which 16 command caches stay, count from its last use.
    if (stat.mtimeMs < Date.now() - DAY_MS) for (const used of [name, ...companions]) touch(join(dir, used));
    return data;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function touch(path) {
  try {
    utimesSync(path, new Date(), new Date());
  } catch {
    // Gone: nothing to keep.
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

const DAY_MS = 86_400_000;

/** Days a cache of another bundle (an older svc, another Node) is kept after it was last used. */
const STALE_DAYS = 30;

/** Command caches kept per bundle, the most recently used: each is about as large as the bundle. */
const COMMAND_CACHES = 16;

/** A temporary file this old is what a process killed while writing left: a write takes milliseconds. */
const TEMPORARY_MS = 3_600_000;

/**
 * Writes the cache `name` of the bundle `bundleId`, then clears what is no
 * longer of use, in one look at the directory: caches of other bundles not
 * used for long (each svc or Node upgrade leaves its caches behind, while two
 * installs in use side by side, a global svc and an npx one, each keep
 * theirs), temporary files of writes cut short, and this bundle's command
 * caches beyond the COMMAND_CACHES most recently used.
 */
function save(dir, bundleId, name, data) {
  const temporary = join(dir, `${name}.${process.pid}`);
  try {
    writeFileSync(temporary, Buffer.concat([digestOf(data), data]), { mode: 0o600 });
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
  let others = [];
  try {
    others = readdirSync(dir);
  } catch {
    return;
  }
  const now = Date.now();
  const lastUsed = (other) => {
    try {
      return lstatSync(join(dir, other)).mtimeMs;
    } catch {
      return now;
    }
  };
  const remove = (other) => {
    try {
      unlinkSync(join(dir, other));
    } catch {
      // Another svc removed it first, or it cannot be: it costs only disk.
    }
  };
  const commandCaches = [];
  for (const other of others) {
    if (/^main-.*\.v8\.\d+$/.test(other)) {
      if (now - lastUsed(other) > TEMPORARY_MS) remove(other);
    } else if (!/^main-.*\.v8$/.test(other)) {
      continue;
    } else if (!other.startsWith(`${bundleId}.`)) {
      if (now - lastUsed(other) > STALE_DAYS * DAY_MS) remove(other);
    } else if (other !== `${bundleId}.v8`) {
      commandCaches.push({ other, used: lastUsed(other) });
    }
  }
  commandCaches.sort((a, b) => b.used - a.used);
  for (const { other } of commandCaches.slice(COMMAND_CACHES)) remove(other);
}

module.exports = { loadBundle, commandKey };
