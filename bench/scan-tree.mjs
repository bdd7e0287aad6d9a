// `svc scan --no-verify --json TREE` against ripgrep over the same files: a
// generated tree of 50,000 source-like text files (1–8 KB, nested
// directories), larger text files of 1–4 MB, binary files, and keys planted
// in known places (hidden and git-ignored files, across 64 KiB and 1 MiB
// boundaries, at the very start and end of a file, JSON-escaped and
// percent-encoded forms, CRLF lines, a binary file), plus decoys that must
// not be reported (keys glued to other symbols, keys under .git
// directories, keys only reachable through symbolic links).
//
// The tree is generated once from a fixed seed and kept under
// $SVC_BENCH_CACHE (default <tmp>/svc-bench-scan); later runs reuse it.
// One untimed round warms the page cache, then each round runs ripgrep and
// svc once, the order alternating; the figure is the median of the
// per-round ratios svc / rg (wall time), with the interquartile range.
// Peak resident memory comes from GNU time (%M).
//
//   node bench/scan-tree.mjs [--rounds N] [--files N] [--seed N]   (after npm run build; --bin measures another build's bin/svc.js)
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { machine, ROOT, SVC_BIN } from './lib.mjs';
import {
  cacheDir,
  fixed,
  hintOf,
  int,
  jsonEscaped,
  percentEncoded,
  prng,
  readManifest,
  RG_PATTERN,
  sourceLines,
  spread,
  svcFindings,
  textOf,
  timedRun,
} from './scan-lib.mjs';

const VERSION = 3;
const FLOOR = join(ROOT, 'bench', 'scan-read-floor.mjs');
export const TARGET_RATIO = 2.5;

/**
 * Writes the tree (unless the cache holds it already) and returns its
 * manifest: the planted keys with where they are and in what form, the
 * decoys, the file count and byte total, and the largest file.
 */
export function generateTree({ files = 50_000, seed = 20261202 } = {}) {
  const dir = cacheDir(`tree-v${VERSION}-s${seed}-f${files}`);
  const cached = readManifest(dir, VERSION);
  if (cached) return cached;
  rmSync(join(dir, 'tree'), { recursive: true, force: true });
  rmSync(join(dir, 'outside'), { recursive: true, force: true });
  const root = join(dir, 'tree');
  const random = prng(seed);
  const pool = sourceLines(random, 6000);
  const exts = ['ts', 'js', 'py', 'go', 'md', 'json', 'yml', 'txt', 'rs', 'c'];
  const sizes = new Map();
  const withPrefix = new Set();
  const write = (path, content) => {
    const full = join(root, path);
    mkdirSync(join(full, '..'), { recursive: true });
    writeFileSync(full, content);
    sizes.set(path, typeof content === 'string' ? Buffer.byteLength(content) : content.length);
    // Files holding the three bytes `sk_` anywhere (task_queue, near misses, keys): a scanner cannot pass them over on a cheap look.
    if (content.includes('sk_')) withPrefix.add(path);
    else withPrefix.delete(path);
  };
  const planted = [];
  const decoys = [];
  const plant = (path, key, form, text) => planted.push({ path, key, hint: hintOf(key), form, rgFinds: form === 'plain' || form === 'crlf', text });

  // Small source-like files: 50 packages × 20 modules, some with a sub-directory.
  const small = files;
  for (let i = 0; i < small; i++) {
    const pkg = i % 50;
    const mod = Math.floor(i / 50) % 20;
    const sub = i % 7 === 0 ? `/sub${i % 3}/deep${i % 5}` : '';
    const path = `src/p${String(pkg).padStart(2, '0')}/m${String(mod).padStart(2, '0')}${sub}/f${String(i).padStart(5, '0')}.${exts[i % exts.length]}`;
    write(path, textOf(random, pool, random.int(1024, 8192)));
  }
  // Larger text files, 1–4 MiB: logs and dumps.
  const large = [];
  for (let i = 0; i < 30; i++) {
    const path = `data/large-${String(i).padStart(2, '0')}.log`;
    large.push(path);
    write(path, textOf(random, pool, random.int(1 << 20, 4 << 20)));
  }
  // Binary files, 16 KiB–1 MiB of noise (NUL bytes included).
  for (let i = 0; i < 40; i++) write(`assets/blob-${String(i).padStart(2, '0')}.bin`, random.bytes(random.int(16 << 10, 1 << 20)));

  // The planted keys, each file written (or rewritten) whole.
  const k = () => random.key();
  const filler = (size) => textOf(random, pool, size);
  {
    const key = k();
    const path = 'src/p07/m13/f00357-config.ts';
    write(path, `${filler(3000)}export const API_KEY = '${key}';\n${filler(2000)}`);
    plant(path, key, 'plain');
    // The same key in a second place: one key, two findings.
    const copy = 'docs/notes/leak-copy.md';
    write(copy, `${filler(1500)}Paste this into the shell: export SVC_API_KEY=${key}\n${filler(500)}`);
    plant(copy, key, 'plain');
  }
  {
    const key = k();
    write('.env', `NODE_ENV=production\nSVC_API_KEY=${key}\nPORT=8080\n`);
    plant('.env', key, 'plain');
  }
  {
    const key = k();
    write('.gitignore', 'build/\n*.local\n');
    write('build/cache/secrets.txt', `${filler(1200)}token: ${key}\n`);
    plant('build/cache/secrets.txt', key, 'plain');
    const key2 = k();
    write('settings.local', `key=${key2}\n`);
    plant('settings.local', key2, 'plain');
  }
  {
    const key = k();
    write('.config/deploy/settings.yml', `deploy:\n  target: prod\n  api_key: "${key}"\n`);
    plant('.config/deploy/settings.yml', key, 'plain');
  }
  {
    // Across the first 64 KiB boundary and the first 1 MiB boundary of a large file: a reader in chunks of either size sees each key cut in two.
    const path = 'data/large-big-boundaries.log';
    const a = k();
    const b = k();
    const head = filler(70_000).slice(0, 65_536 - 30);
    const middle = filler((1 << 20) - 65_536).slice(0, (1 << 20) - (head.length + 1 + a.length + 1) - 30);
    const text = `${head} ${a}\n${middle} ${b}\n${filler(1 << 20)}`;
    write(path, text);
    plant(path, a, 'plain');
    plant(path, b, 'plain');
  }
  {
    const key = k();
    const path = large[7];
    write(path, `${filler(2 << 20)}last=${key}`);
    plant(path, key, 'plain');
  }
  {
    const key = k();
    write('src/first.txt', `${key} at the very start\n${filler(2000)}`);
    plant('src/first.txt', key, 'plain');
  }
  {
    const key = k();
    const key2 = k();
    write('config/app.json', `{\n  "name": "app",\n  "apiKey": "${jsonEscaped(key, 2)}",\n  "backup": "${jsonEscaped(key2, 30)}"\n}\n`);
    plant('config/app.json', key, 'json-escaped');
    plant('config/app.json', key2, 'json-escaped');
  }
  {
    const key = k();
    write('logs/access.log', `${filler(4000)}127.0.0.1 - - "GET /v1/media?api_key=${percentEncoded(key, 2)}&x=1 HTTP/1.1" 200\n${filler(4000)}`);
    plant('logs/access.log', key, 'percent-encoded');
  }
  {
    const key = k();
    write('win/config.ini', `[svc]\r\nurl=https://example.test\r\nkey=${key}\r\n`);
    plant('win/config.ini', key, 'crlf');
  }
  {
    const key = k();
    const path = 'assets/blob-with-key.bin';
    write(path, Buffer.concat([random.bytes(5000), Buffer.from(`\0\0${key}\0\0`), random.bytes(5000)]));
    plant(path, key, 'binary');
  }
  // Decoys: none may be reported.
  {
    const glued = [`x${k()}`, `${k()}Q`, `sk_${k().slice(3)}7`, `9${k()}`];
    write('src/p02/m03/glued.ts', `${filler(1000)}${glued.map((g) => `const s = '${g}';`).join('\n')}\n${filler(1000)}`);
    for (const g of glued) {
      const key = /sk_[A-Za-z0-9]{64}/.exec(g)[0];
      decoys.push({ path: 'src/p02/m03/glued.ts', key, hint: hintOf(key), why: 'glued to other symbols' });
    }
    const inGit = k();
    write('.git/config', `[remote "origin"]\n\turl = https://x:${inGit}@example.test/repo.git\n`);
    decoys.push({ path: '.git/config', key: inGit, hint: hintOf(inGit), why: 'under .git' });
    const inNestedGit = k();
    write('vendor/lib/.git/packed-refs', `# ${inNestedGit}\n`);
    decoys.push({ path: 'vendor/lib/.git/packed-refs', key: inNestedGit, hint: hintOf(inNestedGit), why: 'under a nested .git' });
    const outside = join(dir, 'outside');
    mkdirSync(outside, { recursive: true });
    const linked = k();
    writeFileSync(join(outside, 'secret.txt'), `${linked}\n`);
    symlinkSync(join(outside, 'secret.txt'), join(root, 'link-to-file.txt'));
    symlinkSync(outside, join(root, 'link-to-dir'));
    decoys.push({ path: 'link-to-file.txt, link-to-dir/secret.txt', key: linked, hint: hintOf(linked), why: 'only through symbolic links' });
  }
  // What svc should scan: every file but those under .git (symbolic links are not files it follows).
  const scanned = [...sizes].filter(([path]) => !path.split('/').includes('.git'));
  const largest = scanned.reduce((big, [path, size]) => (size > big.bytes ? { path, bytes: size } : big), { path: '', bytes: 0 });
  const bytes = scanned.reduce((sum, [, size]) => sum + size, 0);
  const filesWithPrefix = scanned.filter(([path]) => withPrefix.has(path)).length;
  const manifest = { version: VERSION, seed, root, files: scanned.length, filesWithPrefix, bytes, largest, planted, decoys, generatedAt: new Date().toISOString() };
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  return manifest;
}

/** ripgrep over the files svc scans: hidden and ignored ones too, no .git directories, no symbolic links followed (rg's default). */
export function rgArgs(root, { text }) {
  return ['--no-ignore', '--hidden', '--no-messages', '-c', ...(text ? ['-a'] : []), '-g', '!.git', RG_PATTERN, root];
}

/** What each tool found of the planted keys and decoys. */
function check(manifest, rgOut, svcOut) {
  const rgFiles = new Set(
    rgOut
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => relative(manifest.root, line.slice(0, line.lastIndexOf(':')))),
  );
  const svc = svcFindings(svcOut);
  const placesOf = (hint) => svc.keys.filter((key) => key.hint === hint).flatMap((key) => key.places.map((p) => JSON.stringify(p)));
  const planted = manifest.planted.map((p) => ({
    ...p,
    rgFound: rgFiles.has(p.path),
    svcFound: placesOf(p.hint).some((place) => place.includes(p.path)),
  }));
  const decoys = manifest.decoys.map((d) => ({ ...d, svcReported: svc.keys.some((key) => key.hint === d.hint) }));
  const expectedDistinct = new Set(manifest.planted.map((p) => p.key)).size;
  return { planted, decoys, svc: { distinct: svc.distinct, findings: svc.findings, scanned: svc.doc.scanned }, expectedDistinct, expectedFindings: manifest.planted.length };
}

export async function benchScanTree({ rounds = 5, files = 50_000, seed = 20261202, bin = SVC_BIN, log = () => {} } = {}) {
  const started = Date.now();
  log('scan-tree: generating (or reusing) the tree…');
  const manifest = generateTree({ files, seed });
  log(`scan-tree: ${int(manifest.files)} files, ${fixed(manifest.bytes / 2 ** 20, 0)} MiB in ${manifest.root} (${Math.round((Date.now() - started) / 1000)} s)`);
  const work = cacheDir('runs');
  const timeFile = join(work, `time-${process.pid}`);
  const text = process.env.SVC_BENCH_RG_TEXT !== '0';
  const rg = () => timedRun('rg', rgArgs(manifest.root, { text }), { timeFile, okCodes: [0, 1] });
  const svc = () => timedRun(process.execPath, [bin, 'scan', '--no-verify', '--json', manifest.root], { timeFile, okCodes: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10] });
  // Yardsticks of Node itself reading the same files (bench/scan-read-floor.mjs): one after another, and 64 at once through the thread pool.
  const floor = (mode) => timedRun(process.execPath, [FLOOR, ...(mode === 'async' ? ['--async'] : []), manifest.root], { timeFile });

  // The warm-up: the page cache, svc's code cache; its outputs are the ones checked.
  const warmRg = await rg();
  const warmSvc = await svc();
  const floorSays = JSON.parse((await floor('sync')).stdout);
  await floor('async');
  const checked = check(manifest, warmRg.stdout, warmSvc.stdout);
  const samples = [];
  for (let round = 0; round < rounds; round++) {
    const pair = {};
    for (const which of round % 2 === 0 ? ['rg', 'svc'] : ['svc', 'rg']) pair[which] = await (which === 'rg' ? rg() : svc());
    pair.sync = await floor('sync');
    pair.async = await floor('async');
    samples.push({
      rgMs: pair.rg.ms,
      svcMs: pair.svc.ms,
      ratio: pair.svc.ms / pair.rg.ms,
      syncMs: pair.sync.ms,
      asyncMs: pair.async.ms,
      syncRatio: pair.sync.ms / pair.rg.ms,
      asyncRatio: pair.async.ms / pair.rg.ms,
      rgPeakMiB: pair.rg.peakMiB,
      svcPeakMiB: pair.svc.peakMiB,
      svcCode: pair.svc.code,
    });
    log(`scan-tree: round ${round + 1}: rg ${int(pair.rg.ms)} ms, svc ${int(pair.svc.ms)} ms, ratio ${fixed(pair.svc.ms / pair.rg.ms)}, svc peak ${fixed(pair.svc.peakMiB, 0)} MiB; node sync ${int(pair.sync.ms)} ms, async ${int(pair.async.ms)} ms`);
  }
  return {
    rounds,
    tree: { root: manifest.root, files: manifest.files, filesWithPrefix: manifest.filesWithPrefix, bytes: manifest.bytes, largest: manifest.largest, seed: manifest.seed },
    rgCommand: `rg ${rgArgs('TREE', { text }).map((a) => (/[\s!{}[\]]/.test(a) ? `'${a}'` : a)).join(' ')}`,
    svcCommand: 'node bin/svc.js scan --no-verify --json TREE',
    ratio: spread(samples.map((s) => s.ratio)),
    rgMs: spread(samples.map((s) => s.rgMs)),
    svcMs: spread(samples.map((s) => s.svcMs)),
    syncMs: spread(samples.map((s) => s.syncMs)),
    asyncMs: spread(samples.map((s) => s.asyncMs)),
    syncRatio: spread(samples.map((s) => s.syncRatio)),
    asyncRatio: spread(samples.map((s) => s.asyncRatio)),
    floorSays,
    svcPeakMiB: Math.max(...samples.map((s) => s.svcPeakMiB ?? NaN)),
    rgPeakMiB: Math.max(...samples.map((s) => s.rgPeakMiB ?? NaN)),
    svcExit: warmSvc.code,
    samples,
    checked,
    seconds: (Date.now() - started) / 1000,
  };
}

/** The section of bench/RESULTS.md. */
export function scanTreeReport(r) {
  const mib = (b) => `${fixed(b / 2 ** 20, 1)} MiB`;
  const c = r.checked;
  const svcMissed = c.planted.filter((p) => !p.svcFound);
  const rgMissed = c.planted.filter((p) => p.rgFinds && !p.rgFound);
  const reportedDecoys = c.decoys.filter((d) => d.svcReported);
  return [
    `A tree generated from seed ${r.tree.seed} (bench/scan-tree.mjs, kept under $SVC_BENCH_CACHE or <tmp>/svc-bench-scan): ${int(r.tree.files)} files, ${mib(r.tree.bytes)}; source-like text files of 1–8 KB in nested directories, 30 text files of 1–4 MiB, 40 binary files of 16 KiB–1 MiB; the largest file is ${r.tree.largest.path} (${mib(r.tree.largest.bytes)}). The text is dense with near misses (\`sk_\` inside words such as task_queue and disk_free, and \`sk_\` followed by fewer than 64 symbols): ${int(r.tree.filesWithPrefix)} of the files hold the bytes \`sk_\` somewhere. ${c.expectedFindings} planted findings of ${c.expectedDistinct} distinct keys (a hidden file, a hidden directory, git-ignored files, across the 64 KiB and 1 MiB boundaries, at the very start and the very end of a file, CRLF lines, two JSON-escaped, one percent-encoded, one in a binary file, one key in two files), and ${c.decoys.length} decoys (keys glued to other symbols, under .git directories, behind symbolic links) that must not be reported. One untimed round warms the page cache; then ${r.rounds} rounds, each running both commands once, the order alternating. Children run in the minimal environment of bench/lib.mjs. Wall time; peak resident memory from GNU time (\`%M\`).`,
    '',
    `- ripgrep: \`${r.rgCommand}\` (\`-g '!.git'\` leaves out .git directories as svc does; \`-a\` searches binary files as text, as svc reads every file; ripgrep follows no symbolic links by default; ripgrep does not decode escaped forms, so it searches the same bytes for the plain form only)`,
    `- svc: \`${r.svcCommand}\``,
    `- yardsticks: \`node bench/scan-read-floor.mjs TREE\` and \`node bench/scan-read-floor.mjs --async TREE\`: Node walking the same files (no .git, no links) and reading each whole, looking only for the bytes \`sk_\` (no key pattern): synchronously on the main thread, and with fs.promises.readFile 64 at a time through libuv's thread pool (it read ${int(r.floorSays.files)} files, ${int(r.floorSays.bytes)} bytes)`,
    '',
    '| | median | IQR | min–max | peak RSS |',
    '|---|---|---|---|---|',
    `| ripgrep | ${int(r.rgMs.median)} ms | ${int(r.rgMs.low)}–${int(r.rgMs.high)} ms | ${int(r.rgMs.min)}–${int(r.rgMs.max)} ms | ${fixed(r.rgPeakMiB, 0)} MiB |`,
    `| svc scan | ${int(r.svcMs.median)} ms | ${int(r.svcMs.low)}–${int(r.svcMs.high)} ms | ${int(r.svcMs.min)}–${int(r.svcMs.max)} ms | ${fixed(r.svcPeakMiB, 0)} MiB |`,
    `| yardstick: Node reads every file, one after another | ${int(r.syncMs.median)} ms | ${int(r.syncMs.low)}–${int(r.syncMs.high)} ms | ${int(r.syncMs.min)}–${int(r.syncMs.max)} ms | |`,
    `| yardstick: Node reads every file, 64 at once (fs.promises) | ${int(r.asyncMs.median)} ms | ${int(r.asyncMs.low)}–${int(r.asyncMs.high)} ms | ${int(r.asyncMs.min)}–${int(r.asyncMs.max)} ms | |`,
    '',
    '| | median ratio | IQR | target | |',
    '|---|---|---|---|---|',
    `| svc / ripgrep, wall time | ${fixed(r.ratio.median)} | ${fixed(r.ratio.low)}–${fixed(r.ratio.high)} | ≤ ${TARGET_RATIO} | ${r.ratio.median <= TARGET_RATIO ? 'met' : '**missed**'} |`,
    `| Node, one file after another / ripgrep | ${fixed(r.syncRatio.median)} | ${fixed(r.syncRatio.low)}–${fixed(r.syncRatio.high)} | yardstick | |`,
    `| Node, 64 at once / ripgrep | ${fixed(r.asyncRatio.median)} | ${fixed(r.asyncRatio.low)}–${fixed(r.asyncRatio.high)} | yardstick | |`,
    '',
    `svc's peak resident memory: ${fixed(r.svcPeakMiB, 0)} MiB, against a largest file of ${mib(r.tree.largest.bytes)}. Per-round ratios: ${r.samples.map((s) => fixed(s.ratio)).join(', ')}.`,
    '',
    `Found: svc reported ${c.svc.distinct} distinct keys and ${c.svc.findings} findings (expected ${c.expectedDistinct} and ${c.expectedFindings}), exit ${r.svcExit}; ${svcMissed.length === 0 ? 'every planted finding' : `**missed ${svcMissed.map((p) => `${p.path} (${p.form})`).join(', ')}**`}; ${reportedDecoys.length === 0 ? 'no decoy reported' : `**reported decoys: ${reportedDecoys.map((d) => `${d.path} (${d.why})`).join(', ')}**`}. ripgrep found ${rgMissed.length === 0 ? 'every plain-form planted key' : `**not ${rgMissed.map((p) => p.path).join(', ')}**`} (it does not decode the escaped forms${c.planted.some((p) => p.form === 'binary' && p.rgFound) ? '' : ', nor found the one in the binary file'}).`,
    '',
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { bin: { type: 'string' }, rounds: { type: 'string', default: '5' }, files: { type: 'string', default: '50000' }, seed: { type: 'string', default: '20261202' } } });
  const env = machine();
  const result = await benchScanTree({ rounds: Number(values.rounds), files: Number(values.files), seed: Number(values.seed), log: (l) => process.stderr.write(`${l}\n`), ...(values.bin ? { bin: values.bin } : {}) });
  process.stdout.write(`machine: ${env.cpu} × ${env.cores}, ${env.node}, load ${env.loadAverage} → ${machine().loadAverage}\n\n`);
  process.stdout.write(`${scanTreeReport(result).join('\n')}\n`);
  writeFileSync(join(cacheDir('runs'), 'scan-tree.json'), JSON.stringify(result, null, 2));
}
