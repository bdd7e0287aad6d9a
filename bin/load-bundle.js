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
//
// Measured by bench/clever-parts.mjs (`svc keys list --json` of 30 keys
// against `svc serve --local --plan pro`, warm caches, against the same run
// with NODE_DISABLE_COMPILE_CACHE=1, which requires the bundle without this
// file; children in an environment of PATH and HOME only; 20 rounds on a
// 2-core machine shared with other work, so CPU time, user and system, says
// more than wall time), median of the per-round ratios of CPU time without
// the cache to with it (interquartile range):
//   node bench/clever-parts.mjs --node <node> --rounds 20
//   Node 20.20.2  ×1.19 (1.17–1.29)   Node 22.23.3  ×1.17 (1.16–1.23)
//   Node 24.22.3  ×1.09 (1.05–1.12)   Node 26.12.1  ×1.13 (1.08–1.13)
// (wall time ×1.24, ×1.19, ×1.09, ×1.12), so it still pays on every Node
// line svc runs on.
'use strict';

const { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, unlinkSync, utimesSync, writeFileSync } =
  process.getBuiltinModule('node:fs');
const { dirname, join } = process.getBuiltinModule('node:path');

/**
 * What commandKey must know of the program's command line: the options
 * whose value is not a command word, and the commands whose next word is a
 * subcommand. scripts/argv-grammar.mjs writes it from the commander program
 * beside the bundle `file` at build time; read as one small file, it costs
 * a start about 0.07 ms (Node 20, timed in-process: 0.04% of the CPU time
 * of a `keys list`), where a copy kept here by hand could drift.
 */
function argvGrammar(file) {
  const { valueOptions, groups } = JSON.parse(readFileSync(join(dirname(file), 'argv-grammar.json'), 'utf8'));
  return { valueOptions: new Set(valueOptions), groups: new Set(groups) };
}

/**
 * Which command `argv` runs, as far as choosing a cache goes: its command
 * word, and a group's subcommand ("keys-list"), or "svc" for none, by the
 * program's grammar (argvGrammar). A wrong guess costs only speed: the
 * cache is that of another command or none. A request for help or the
 * version has none: its run would make the command's cache out of that
 * code alone. A group of short flags (`-qh`) counts by its letters.
 */
function commandKey(argv, { valueOptions, groups }) {
  const words = [];
  let ended = false;
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    if (word === '--') break;
    if (word === '--help' || word === '--version' || /^-[^-]*[hV]/.test(word)) return undefined;
    if (word.startsWith('-')) {
      if (valueOptions.has(word)) i++;
      continue;
    }
    if (words.length === 0 && word === 'help') return undefined;
    if (!ended && (words.length === 0 || (words.length === 1 && groups.has(words[0]))) && /^[a-z_][a-z0-9_-]{0,31}$/.test(word)) words.push(word);
    else ended = true;
  }
  return words.length === 0 ? 'svc' : words.join('-');
}

/**
 * Loads the CommonJS file `file` with V8's code cache kept in `cacheDir`
 * (null: none, nothing read or made), for the command `command`
 * (commandKey; undefined: none of its own).
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
  const usable = unchanged && cacheDir !== null && ownDirectory(cacheDir);
  const ownCache = usable && commandCache !== undefined ? readCache(cacheDir, commandCache, [startCache]) : undefined;
  const cachedData = ownCache ?? (usable ? readCache(cacheDir, startCache) : undefined);
  const vm = process.getBuiltinModule('node:vm');
  // The same wrapper and arguments Node's CommonJS loader gives a file.
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  const script = new vm.Script(wrapped, { filename: file, cachedData });
  const taken = cachedData !== undefined && !script.cachedDataRejected;
  // After a run from its own cache there is nothing new to keep.
  const keep = usable && commandCache !== undefined && !(taken && ownCache !== undefined);
  const module = { exports: {} };
  // This file's own require: bin/ and dist/ are siblings in one package, so
  // the bundle's one package it requires (the keyring binding) resolves the
  // same from either; Module.createRequire would load node:module for it.
  script.runInThisContext().call(module.exports, module.exports, require, module, file, dirname(file));
  if (usable && !taken) save(cacheDir, bundleId, startCache, script.createCachedData());

  /**
   * Keeps the code the command compiled as its own cache, unless it ran from
   * that cache already. `restoreFlags` puts back the V8 flags the command
   * changed and tells whether they are as they were at the start
   * (src/client/v8-flags.ts); if not, nothing is kept, since V8 takes a
   * cache only under the flags it was made with and would refuse it on
   * every later run.
   */
  function keepCompiledCode(restoreFlags) {
    if (keep && restoreFlags()) save(cacheDir, bundleId, commandCache, script.createCachedData());
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

module.exports = { loadBundle, commandKey, argvGrammar };
