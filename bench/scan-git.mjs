// `svc scan --git --no-verify --json REPO` against the shell pipeline
// `git log -p --all | rg -c 'sk_[A-Za-z0-9]{64}'` on a generated repository
// of more than 10,000 commits: files added, changed and deleted, feature
// branches that are never merged, lightweight and annotated tags, a commit
// reachable only from a tag, and keys planted in its history (in a file
// deleted later, in a line changed later, only on a branch, only under a
// tag, still at the tip, JSON-escaped, percent-encoded, one key in two
// blobs), plus a decoy in a blob no ref reaches, which must not be reported.
//
// The repository is written once with `git fast-import` from a fixed seed
// (ten thousand `git commit` calls would take many minutes), repacked with
// deltas as a repository that lived would be, and kept under
// $SVC_BENCH_CACHE (default <tmp>/svc-bench-scan). One untimed round warms
// the page cache; each round then runs both once, the order alternating.
//
//   node bench/scan-git.mjs [--rounds N] [--commits N] [--seed N]   (after npm run build; --bin measures another build's bin/svc.js)
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { childEnv, machine, SVC_BIN } from './lib.mjs';
import { cacheDir, fixed, hintOf, int, jsonEscaped, percentEncoded, prng, readManifest, RG_PATTERN, sourceLines, spread, svcFindings, textOf, timedRun } from './scan-lib.mjs';

const VERSION = 4;
const GIT_ENV = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C' };

function gitSync(repo, args, input) {
  const result = spawnSync('git', ['-C', repo, ...args], { input, env: childEnv(GIT_ENV), encoding: 'utf8', maxBuffer: 1 << 30 });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return result.stdout;
}

/** A writer of the fast-import stream to a running `git fast-import`, minding backpressure. */
function fastImport(repo) {
  const child = spawn('git', ['-C', repo, 'fast-import', '--quiet', '--done'], { env: childEnv(GIT_ENV), stdio: ['pipe', 'inherit', 'inherit'] });
  const exited = new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`git fast-import exited ${code}`))));
  });
  let pending = [];
  let pendingBytes = 0;
  return {
    async write(text) {
      pending.push(text);
      pendingBytes += text.length;
      if (pendingBytes < 1 << 20) return;
      const chunk = pending.join('');
      pending = [];
      pendingBytes = 0;
      if (!child.stdin.write(chunk)) await new Promise((resolve) => child.stdin.once('drain', resolve));
    },
    async end() {
      child.stdin.end(`${pending.join('')}done\n`);
      await exited;
    },
  };
}

const data = (text) => `data ${Buffer.byteLength(text)}\n${text}\n`;

/**
 * Writes the repository (unless the cache holds it already) and returns its
 * manifest: commits, refs, blobs, and the planted keys with what each is.
 */
export async function generateRepo({ commits = 10_000, seed = 20261203 } = {}) {
  const dir = cacheDir(`git-v${VERSION}-s${seed}-c${commits}`);
  const cached = readManifest(dir, VERSION);
  if (cached) return cached;
  const repo = join(dir, 'repo');
  rmSync(repo, { recursive: true, force: true });
  mkdirSync(repo, { recursive: true });
  gitSync(repo, ['init', '-q', '-b', 'main']);
  const random = prng(seed);
  const pool = sourceLines(random, 6000);
  const out = fastImport(repo);
  const planted = [];
  const decoys = [];
  let mark = 0;
  let time = Date.parse('2024-01-01T00:00:00Z') / 1000;
  let total = 0;
  const files = new Map(); // path → lines, the files on main that random changes pick from
  let nextFile = 0;
  const newPath = () => {
    const n = nextFile++;
    return `src/p${String(n % 40).padStart(2, '0')}/m${String(Math.floor(n / 40) % 25).padStart(2, '0')}/f${String(n).padStart(5, '0')}.${['ts', 'js', 'py', 'md', 'json'][n % 5]}`;
  };
  const newLines = () => textOf(random, pool, random.int(1024, 8192)).split('\n');
  /** One commit on `ref` whose parent is `from` (a mark; none for a root), with `changes` ([op, path, text?]); returns its mark. */
  const commit = async (ref, from, changes, message) => {
    const m = ++mark;
    time += random.int(60, 7200);
    let text = `commit ${ref}\nmark :${m}\nauthor Dev ${random.int(1, 9)} <dev@example.test> ${time} +0000\ncommitter Dev <dev@example.test> ${time} +0000\n${data(message)}`;
    if (from) text += `from :${from}\n`;
    for (const [op, path, content] of changes) text += op === 'D' ? `D ${path}\n` : `M 100644 inline ${path}\n${data(content)}`;
    await out.write(text);
    total++;
    return m;
  };
  /** Random changes to the files of main: mostly edits, some new files, some deletions. */
  const randomChanges = () => {
    const changes = [];
    const paths = [...files.keys()];
    for (let i = random.int(1, 4); i > 0; i--) {
      const roll = random.next();
      if (roll < 0.15 || paths.length < 200) {
        const path = newPath();
        files.set(path, newLines());
        changes.push(['M', path, files.get(path).join('\n')]);
      } else if (roll < 0.22 && paths.length > 400) {
        const path = random.pick(paths);
        if (!files.has(path)) continue;
        files.delete(path);
        changes.push(['D', path]);
      } else {
        const path = random.pick(paths);
        const lines = files.get(path);
        if (!lines) continue;
        for (let e = random.int(1, 6); e > 0; e--) {
          const at = random.int(0, lines.length - 1);
          if (random.next() < 0.5) lines[at] = random.pick(pool);
          else lines.splice(at, 0, random.pick(pool));
        }
        changes.push(['M', path, lines.join('\n')]);
      }
    }
    return changes;
  };
  const plant = (key, form, where) => planted.push({ key, hint: hintOf(key), form, where });
  const filler = () => textOf(random, pool, random.int(1000, 4000));

  // Main: `commits` commits; the planted keys go in at fixed points, in files the random changes never touch.
  const at = (fraction) => Math.floor(commits * fraction);
  const keys = {
    deleted: random.key(),
    changed: random.key(),
    branch: random.key(),
    tagOnly: random.key(),
    tip: random.key(),
    json: random.key(),
    percent: random.key(),
    twoBlobs: random.key(),
    unreachable: random.key(),
  };
  const mainMarks = [];
  let head = 0;
  const branches = [];
  const tags = [];
  for (let c = 1; c <= commits; c++) {
    const changes = c === 1 ? Array.from({ length: 300 }, () => ['M', newPath(), '']) : randomChanges();
    if (c === 1) {
      for (const change of changes) {
        files.set(change[1], newLines());
        change[2] = files.get(change[1]).join('\n');
      }
    }
    if (c === at(0.15)) changes.push(['M', 'config/old-secrets.env', `# to be removed\nSVC_API_KEY=${keys.deleted}\n`]);
    if (c === at(0.3)) changes.push(['D', 'config/old-secrets.env']);
    if (c === at(0.25)) changes.push(['M', 'src/client/defaults.ts', `${filler()}export const FALLBACK_KEY = '${keys.changed}';\n${filler()}`]);
    if (c === at(0.26)) changes.push(['M', 'src/client/defaults.ts', `${filler()}export const FALLBACK_KEY = process.env.SVC_API_KEY;\n${filler()}`]);
    if (c === at(0.4)) changes.push(['M', 'fixtures/recorded.json', `{"request": {"headers": {"authorization": "Bearer ${jsonEscaped(keys.json, 2)}"}}}\n`]);
    if (c === at(0.45)) changes.push(['M', 'logs/proxy.log', `${filler()}GET /media?api_key=${percentEncoded(keys.percent, 2)} 200\n${filler()}`]);
    if (c === at(0.5)) changes.push(['M', 'docs/setup.md', `${filler()}Run: SVC_API_KEY=${keys.twoBlobs} svc status\n`]);
    if (c === at(0.55)) changes.push(['M', 'docs/setup.md', `Setup\n=====\n${filler()}Run: SVC_API_KEY=${keys.twoBlobs} svc status\n`]);
    if (c === at(0.9)) changes.push(['M', '.env.production', `SVC_API_KEY=${keys.tip}\n`]);
    head = await commit('refs/heads/main', head, changes, `change ${c}: ${random.pick(pool).trim().slice(0, 60)}\n`);
    mainMarks.push(head);
    if (c % 500 === 0) {
      tags.push(`v0.${c / 500}.0`);
      await out.write(`reset refs/tags/v0.${c / 500}.0\nfrom :${head}\n\n`);
    }
    if (c % 2500 === 0) {
      const name = `v${c / 2500}.0.0`;
      tags.push(name);
      await out.write(`tag ${name}\nfrom :${head}\ntagger Release <release@example.test> ${time} +0000\n${data(`release ${name}\n`)}`);
    }
    if (c % 1250 === 0) {
      // A feature branch of 10–30 commits from here, never merged; branch files are new paths, so main's pool is unchanged.
      const name = `feature/f${c / 1250}`;
      let tip = head;
      const own = new Map();
      for (let b = random.int(10, 30); b > 0; b--) {
        const path = own.size > 0 && random.next() < 0.6 ? random.pick([...own.keys()]) : `feature/${name.slice(8)}/${random.int(0, 999)}.ts`;
        own.set(path, textOf(random, pool, random.int(1024, 8192)));
        tip = await commit(`refs/heads/${name}`, tip, [['M', path, own.get(path)]], `feature work on ${name}\n`);
      }
      if (c === 5000) {
        tip = await commit(`refs/heads/${name}`, tip, [['M', 'feature/token.txt', `token=${keys.branch}\n`]], 'try with a real key\n');
        plant(keys.branch, 'plain', `only on branch ${name}`);
      }
      branches.push(name);
    }
  }
  // A commit only a tag reaches: made on the tag's ref itself.
  await commit('refs/tags/snapshot-2024', mainMarks[at(0.6)], [['M', 'snapshot/credentials.txt', `key: ${keys.tagOnly}\n`]], 'snapshot with credentials\n');
  tags.push('snapshot-2024');
  // A blob no commit holds, so no ref reaches it: in the pack, but not in the history.
  await out.write(`blob\nmark :${++mark}\n${data(`SVC_API_KEY=${keys.unreachable}\n`)}`);
  await out.end();
  plant(keys.deleted, 'plain', 'in a file deleted later');
  plant(keys.changed, 'plain', 'in a line changed later');
  plant(keys.tagOnly, 'plain', 'only in a commit a tag reaches');
  plant(keys.tip, 'plain', 'at the tip of main');
  plant(keys.json, 'json-escaped', 'JSON-escaped, at the tip');
  plant(keys.percent, 'percent-encoded', 'percent-encoded, at the tip');
  plant(keys.twoBlobs, 'plain', 'in two blobs of one file');
  decoys.push({ key: keys.unreachable, hint: hintOf(keys.unreachable), why: 'in a blob no ref reaches' });

  // A repository that lived is packed with deltas; fast-import's pack barely is.
  gitSync(repo, ['repack', '-a', '-d', '-k', '-f', '-q', '--window=10', '--depth=50']);
  gitSync(repo, ['reset', '-q', '--hard', 'main']);
  const count = (args) => Number(gitSync(repo, args).trim());
  const blobs = gitSync(repo, ['rev-list', '--objects', '--all', '--filter=object:type=blob', '--filter-provided-objects']).trim().split('\n').length;
  const manifest = {
    version: VERSION,
    seed,
    repo,
    commits: count(['rev-list', '--all', '--count']),
    mainCommits: count(['rev-list', '--count', 'main']),
    branches: ['main', ...branches],
    tags,
    blobs,
    blobBytes: Number(
      spawnSync('sh', ['-c', "git rev-list --objects --all --filter=object:type=blob --filter-provided-objects | cut -d' ' -f1 | git cat-file --batch-check='%(objectsize)'"], {
        cwd: repo,
        env: childEnv(GIT_ENV),
        encoding: 'utf8',
        maxBuffer: 1 << 30,
      })
        .stdout.trim()
        .split('\n')
        .reduce((sum, size) => sum + Number(size), 0),
    ),
    packMiB: Number(/size-pack: (\d+)/.exec(gitSync(repo, ['count-objects', '-v']))[1]) / 1024,
    planted,
    decoys,
    generatedAt: new Date().toISOString(),
  };
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  return manifest;
}

function check(manifest, svcOut, pipeOut) {
  const svc = svcFindings(svcOut);
  const hints = new Set(svc.keys.map((k) => k.hint));
  return {
    planted: manifest.planted.map((p) => ({ ...p, svcFound: hints.has(p.hint), places: svc.keys.find((k) => k.hint === p.hint)?.places.length ?? 0 })),
    decoys: manifest.decoys.map((d) => ({ ...d, svcReported: hints.has(d.hint) })),
    svc: { distinct: svc.distinct, findings: svc.findings, scanned: svc.doc.scanned },
    pipelineLines: Number(pipeOut.trim() || 0),
  };
}

export const PIPELINE = `git log -p --all | rg -c '${RG_PATTERN}'`;

export async function benchScanGit({ rounds = 5, commits = 10_000, seed = 20261203, bin = SVC_BIN, log = () => {} } = {}) {
  const started = Date.now();
  log('scan-git: generating (or reusing) the repository…');
  const manifest = await generateRepo({ commits, seed });
  log(`scan-git: ${int(manifest.commits)} commits, ${int(manifest.blobs)} blobs in ${manifest.repo} (${Math.round((Date.now() - started) / 1000)} s)`);
  const timeFile = join(cacheDir('runs'), `time-git-${process.pid}`);
  // The pipeline's exit is rg's: 1 when it counts nothing.
  const pipeline = () => timedRun('sh', ['-c', PIPELINE], { cwd: manifest.repo, env: GIT_ENV, okCodes: [0, 1], timeFile });
  const svc = () => timedRun(process.execPath, [bin, 'scan', '--git', '--no-verify', '--json', manifest.repo], { timeFile, okCodes: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10] });
  const warmPipe = await pipeline();
  const warmSvc = await svc();
  const checked = check(manifest, warmSvc.stdout, warmPipe.stdout);
  const samples = [];
  for (let round = 0; round < rounds; round++) {
    const pair = {};
    for (const which of round % 2 === 0 ? ['pipe', 'svc'] : ['svc', 'pipe']) pair[which] = await (which === 'pipe' ? pipeline() : svc());
    samples.push({ pipeMs: pair.pipe.ms, svcMs: pair.svc.ms, ratio: pair.svc.ms / pair.pipe.ms, svcPeakMiB: pair.svc.peakMiB });
    log(`scan-git: round ${round + 1}: pipeline ${int(pair.pipe.ms)} ms, svc ${int(pair.svc.ms)} ms, ratio ${fixed(pair.svc.ms / pair.pipe.ms)}`);
  }
  return {
    rounds,
    repo: { ...manifest, planted: undefined, decoys: undefined },
    ratio: spread(samples.map((s) => s.ratio)),
    pipeMs: spread(samples.map((s) => s.pipeMs)),
    svcMs: spread(samples.map((s) => s.svcMs)),
    svcPeakMiB: Math.max(...samples.map((s) => s.svcPeakMiB ?? NaN)),
    svcExit: warmSvc.code,
    samples,
    checked,
    seconds: (Date.now() - started) / 1000,
  };
}

export function scanGitReport(r) {
  const c = r.checked;
  const missed = c.planted.filter((p) => !p.svcFound);
  const reported = c.decoys.filter((d) => d.svcReported);
  return [
    `A repository written by \`git fast-import\` from seed ${r.repo.seed} (bench/scan-git.mjs, kept under $SVC_BENCH_CACHE or <tmp>/svc-bench-scan), then \`git repack -a -d -k -f --window=10 --depth=50\` (\`-k\` keeps the blobs no ref reaches, the decoy among them): ${int(r.repo.commits)} commits (${int(r.repo.mainCommits)} on main), ${r.repo.branches.length} branches, ${r.repo.tags.length} tags (lightweight and annotated, one on a commit no branch holds), ${int(r.repo.blobs)} distinct blobs reachable (${fixed(r.repo.blobBytes / 2 ** 20, 0)} MiB of blob content, a ${fixed(r.repo.packMiB, 0)} MiB pack), files of 1–8 KB added, edited and deleted, 1–4 changes a commit. ${c.planted.length} keys planted: ${c.planted.map((p) => p.where).join('; ')}; one decoy in a blob no ref reaches. One untimed round warms the page cache; then ${r.rounds} rounds, each running both once, the order alternating. Children run in the minimal environment of bench/lib.mjs (git with no system or global configuration).`,
    '',
    `- pipeline: \`${PIPELINE}\` (run by \`sh -c\` in the repository; it counts lines of every commit's diff, so a key appears once for each commit that adds or removes it)`,
    '- svc: `node bin/svc.js scan --git --no-verify --json REPO`',
    '',
    '| | median | IQR | min–max |',
    '|---|---|---|---|',
    `| pipeline | ${int(r.pipeMs.median)} ms | ${int(r.pipeMs.low)}–${int(r.pipeMs.high)} ms | ${int(r.pipeMs.min)}–${int(r.pipeMs.max)} ms |`,
    `| svc scan --git | ${int(r.svcMs.median)} ms | ${int(r.svcMs.low)}–${int(r.svcMs.high)} ms | ${int(r.svcMs.min)}–${int(r.svcMs.max)} ms |`,
    '',
    '| | median ratio | IQR | target | |',
    '|---|---|---|---|---|',
    `| svc / pipeline, wall time | ${fixed(r.ratio.median)} | ${fixed(r.ratio.low)}–${fixed(r.ratio.high)} | < 1 | ${r.ratio.median < 1 ? 'met' : '**missed**'} |`,
    '',
    `svc's peak resident memory ${fixed(r.svcPeakMiB, 0)} MiB. Per-round ratios: ${r.samples.map((s) => fixed(s.ratio)).join(', ')}.`,
    '',
    `Found: svc reported ${c.svc.distinct} distinct keys and ${c.svc.findings} findings, exit ${r.svcExit}; ${missed.length === 0 ? `every planted key (${c.planted.length})` : `**missed: ${missed.map((p) => p.where).join('; ')}**`}; ${reported.length === 0 ? 'not the unreachable decoy' : '**reported the unreachable decoy**'}. The pipeline counted ${int(c.pipelineLines)} lines.`,
    '',
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { bin: { type: 'string' }, rounds: { type: 'string', default: '5' }, commits: { type: 'string', default: '10000' }, seed: { type: 'string', default: '20261203' } } });
  const env = machine();
  const result = await benchScanGit({ rounds: Number(values.rounds), commits: Number(values.commits), seed: Number(values.seed), log: (l) => process.stderr.write(`${l}\n`), ...(values.bin ? { bin: values.bin } : {}) });
  process.stdout.write(`machine: ${env.cpu} × ${env.cores}, ${env.node}, load ${env.loadAverage} → ${machine().loadAverage}\n\n`);
  process.stdout.write(`${scanGitReport(result).join('\n')}\n`);
  writeFileSync(join(cacheDir('runs'), 'scan-git.json'), JSON.stringify(result, null, 2));
}
