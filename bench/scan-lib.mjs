// Pieces the `svc scan` benchmarks share: a seeded random source (so a
// generated tree or repository is the same on every machine and every run),
// keys drawn from it, the cache directory generated inputs are kept in, and
// a timed child run that also reports its peak resident memory.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childEnv, elapsedMs, median, quantile, ROOT } from './lib.mjs';

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** The pattern ripgrep is given: the key's plain form, as the issue writes it. */
export const RG_PATTERN = 'sk_[A-Za-z0-9]{64}';

/** mulberry32: small, fast and good enough for test data; the same seed gives the same stream everywhere. */
export function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (low, high) => low + Math.floor(next() * (high - low + 1));
  const pick = (list) => list[Math.floor(next() * list.length)];
  const key = () => {
    let out = 'sk_';
    for (let i = 0; i < 64; i++) out += BASE62[Math.floor(next() * 62)];
    return out;
  };
  /** `length` bytes of noise, NUL bytes included. */
  const bytes = (length) => {
    const words = new Uint32Array(Math.ceil(length / 4));
    for (let i = 0; i < words.length; i++) words[i] = Math.floor(next() * 4294967296);
    return Buffer.from(words.buffer, 0, length);
  };
  return { next, int, pick, key, bytes };
}

/** Where generated inputs are kept between runs: $SVC_BENCH_CACHE, else under the system's tmp dir. */
export function cacheDir(name) {
  const dir = join(process.env.SVC_BENCH_CACHE ?? join(tmpdir(), 'svc-bench-scan'), name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The manifest a generator wrote last, once everything else was in place; null when there is none (or another version's). */
export function readManifest(dir, version) {
  const file = join(dir, 'manifest.json');
  if (!existsSync(file)) return null;
  const manifest = JSON.parse(readFileSync(file, 'utf8'));
  return manifest.version === version ? manifest : null;
}

/** A line of source-like text: identifiers, operators, strings and comments, never a key or anything shaped like one. */
export function sourceLines(random, count) {
  const words = [
    'const', 'let', 'return', 'function', 'if', 'else', 'for', 'while', 'import', 'export', 'await', 'async', 'new', 'this',
    'value', 'result', 'items', 'index', 'options', 'config', 'request', 'response', 'buffer', 'stream', 'token', 'handler',
    'user', 'workspace', 'plan', 'limit', 'cursor', 'page', 'status', 'error', 'message', 'code', 'path', 'name', 'id',
    'skip', 'sketch', 'skill', 'sk', 'ask_user', 'task_queue', 'disk_free', 'risk_level', 'mask_', 'desk_', 'kiosk_mode',
  ];
  const ops = [' = ', ' + ', ' - ', ' * ', ' === ', ' !== ', ' && ', ' || ', ', ', '.', '(', ')', '[', ']', ' ? ', ' : '];
  const lines = [];
  for (let i = 0; i < count; i++) {
    const indent = '  '.repeat(random.int(0, 4));
    const kind = random.next();
    let line = indent;
    if (kind < 0.12) {
      line += `// ${Array.from({ length: random.int(3, 12) }, () => random.pick(words)).join(' ')}`;
    } else if (kind < 0.2) {
      line += `const ${random.pick(words)}_${random.int(0, 999)} = '${Array.from({ length: random.int(1, 6) }, () => random.pick(words)).join('-')}';`;
    } else if (kind < 0.25) {
      // Near misses: sk_ followed by too few symbols, or by a character outside the alphabet.
      line += `const sample = 'sk_${BASE62.slice(random.int(0, 20), random.int(30, 60))}';`;
    } else if (kind < 0.28) {
      line += '';
    } else {
      const parts = random.int(2, 9);
      for (let p = 0; p < parts; p++) line += random.pick(words) + (p < parts - 1 ? random.pick(ops) : ';');
    }
    lines.push(line);
  }
  return lines;
}

/** Text of about `size` bytes made of lines from `pool`, ending with a newline. */
export function textOf(random, pool, size) {
  const parts = [];
  let length = 0;
  while (length < size) {
    const line = random.pick(pool);
    parts.push(line);
    length += line.length + 1;
  }
  return `${parts.join('\n')}\n`;
}

/** The key with one of its characters JSON-escaped (`\u00XX`), as a JSON serialiser escaping more than it must writes it. */
export function jsonEscaped(key, at = 2) {
  return `${key.slice(0, at)}\\u${key.charCodeAt(at).toString(16).padStart(4, '0')}${key.slice(at + 1)}`;
}

/** The key with one of its characters percent-encoded, as in a URL's query string. */
export function percentEncoded(key, at = 2) {
  return `${key.slice(0, at)}%${key.charCodeAt(at).toString(16).toUpperCase().padStart(2, '0')}${key.slice(at + 1)}`;
}

/**
 * Runs `command args` to its end under /usr/bin/time (GNU time, for the peak
 * resident memory of the child), stdout kept, in the minimal environment of
 * lib.mjs plus `env`. `shell` runs the command line through sh -c instead
 * (a pipeline), and the peak is then the largest of its processes'.
 * Resolves with the wall time in ms, stdout, and peakMiB (null without GNU time).
 */
export function timedRun(command, args, { env = {}, cwd = ROOT, okCodes = [0], timeFile } = {}) {
  return new Promise((resolve, reject) => {
    const useTime = timeFile && existsSync('/usr/bin/time');
    const argv = useTime ? ['/usr/bin/time', '-f', '%M', '-o', timeFile, command, ...args] : [command, ...args];
    const started = process.hrtime.bigint();
    const child = spawn(argv[0], argv.slice(1), { cwd, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    let err = '';
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.once('error', reject);
    child.once('exit', (code) => {
      const ms = elapsedMs(started);
      if (!okCodes.includes(code)) return reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${err.slice(0, 2000)}`));
      let peakMiB = null;
      if (useTime) {
        // GNU time writes "Command exited with non-zero status N" first when it did.
        const lines = readFileSync(timeFile, 'utf8').trim().split('\n');
        peakMiB = Number(lines[lines.length - 1]) / 1024;
      }
      resolve({ ms, code, stdout: Buffer.concat(out).toString('utf8'), stderr: err, peakMiB });
    });
  });
}

/** Median and interquartile range of a list of figures. */
export function spread(values) {
  return { median: median(values), low: quantile(values, 0.25), high: quantile(values, 0.75), min: Math.min(...values), max: Math.max(...values) };
}

export const fixed = (n, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
export const int = (n) => Math.round(n).toLocaleString('en-US');

/** Counts what `svc scan --json` reported: findings (every place) and distinct keys, and the places per key hint. */
export function svcFindings(stdout) {
  const doc = JSON.parse(stdout);
  const keys = doc.keys ?? [];
  return { doc, distinct: keys.length, findings: keys.reduce((n, k) => n + (k.places?.length ?? 0), 0), keys };
}

/** The hint the service gives a key: `sk_`, the next 4 characters, `…`, the last 4. */
export const hintOf = (key) => `sk_${key.slice(3, 7)}\u2026${key.slice(-4)}`;
