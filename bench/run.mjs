// `npm run bench`: start-up, throughput, scale, a 100,000-key list, limiter and svc scan figures for this
// machine, printed as a table and written to bench/RESULTS.md beside their
// targets. Expects a built dist/ (`npm run bench` builds first).
//
//   node bench/run.mjs [--before <git-ref>] [--node <path-to-node>]… [--no-scan]
//
// --before also builds <git-ref> in a temporary directory and measures its
// server in the same throughput runs and on the large store, for a
// before/after comparison made on the same machine in the same run.
// --node (repeatable) measures CLI start-up with other Node binaries too,
// each in its own table (the other sections use the running node).
// --no-scan leaves out the three svc scan sections (bench/scan-tree.mjs,
// scan-git.mjs, scan-verify.mjs: about 5 minutes, plus generating their
// inputs once into <tmp>/svc-bench-scan).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { benchBigList, bigListReport } from './big-list.mjs';
import { benchLimiter } from './limiter.mjs';
import { machine, ROOT, SVC_BIN } from './lib.mjs';
import { benchKeysListTerminal, benchRenderTable } from './render.mjs';
import { benchScale } from './scale.mjs';
import { benchScanGit, scanGitReport } from './scan-git.mjs';
import { benchScanTree, scanTreeReport } from './scan-tree.mjs';
import { benchScanVerify, scanVerifyReport } from './scan-verify.mjs';
import { benchNpxCold, benchStartup, npxColdSection } from './startup.mjs';
import { benchThroughput, CONNECTIONS } from './throughput.mjs';

const { values } = parseArgs({ options: { before: { type: 'string' }, node: { type: 'string', multiple: true, default: [] }, 'no-scan': { type: 'boolean', default: false } } });

const TARGETS = {
  // Each of the 200, 429 and 401 paths against bare node:http at 50 connections.
  throughputRatio: 0.6,
  p99Ms: 10,
  managementMs: 100,
  // "Unchanged": authentication with 100,000 keys within 10 % of its throughput and latency with 2,000.
  authRatio: 0.9,
  authLatencyRatio: 1.1,
  limiterAdmits: 30,
  keysListTerminalMs: 1000,
  // Issue 27, for the store of 100,000 keys: start-up, peak memory, and a create's p50 against the small store's.
  largeStartMs: 400,
  largePeakMiB: 300,
  createP50Ratio: 1.5,
};

function log(line) {
  process.stderr.write(`${line}\n`);
}

/** The svc of another commit, built aside with this checkout's node_modules. */
function buildRef(ref) {
  const commit = execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim();
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-before-'));
  const archive = execFileSync('git', ['archive', commit], { cwd: ROOT, maxBuffer: 256 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: dir, stdio: 'inherit' });
  return { commit, dir, bin: join(dir, 'bin', 'svc.js') };
}

function commitOf(dir) {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim();
    const measured = ['src', 'bench', 'bin', 'scripts', ':!bench/RESULTS.md'];
    const dirty = execFileSync('git', ['status', '--porcelain', '--', ...measured], { cwd: dir, encoding: 'utf8' }).trim();
    return dirty ? `${sha} (with uncommitted changes)` : sha;
  } catch {
    return 'unknown';
  }
}

const mark = (ok) => (ok ? 'met' : '**missed**');
const fixed = (n, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
const int = (n) => Math.round(n).toLocaleString('en-US');

function report({ env, command, startup, npx, terminal, tableDraw, throughput, scale, bigList, limiter, scan, before, seconds }) {
  const lines = [];
  const table = (head, rows) => {
    lines.push(`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`);
    for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
    lines.push('');
  };

  lines.push('# Benchmark results', '');
  lines.push(`Produced by \`${command}\` at commit ${env.commit}. Every figure below comes from that one run.`, '');
  table(
    ['machine', ''],
    [
      ['CPU', `${env.cpu} × ${env.cores} cores`],
      ['memory', `${fixed(env.memoryGiB, 1)} GiB (${fixed(env.memoryAvailableGiB, 1)} GiB available at start)`],
      ['OS', env.os],
      ['Node.js', env.node],
      ['date', env.date],
      ['load average at start (1, 5, 15 min)', env.loadAverage],
      ['load average at end', env.loadAverageAtEnd],
    ],
  );

  lines.push('## CLI start-up', '');
  lines.push(
    `Each measured run is paired with a run of its floor next to it (order alternating within pairs); the figure is the median of the ${startup[0].pairs} per-pair ratios, with the interquartile range. \`svc --version\` stands on \`node -e 0\`; \`keys list\` on \`bench/floor-request.cjs\`, one \`GET /user/api-keys\` made with the undici subset and \`--liftoff-only\` flag svc's transport uses, its body printed: svc's own cost is what it adds to that. Both \`keys list\` rows run against a reference server on this machine; "saved profile" is the path after \`svc login\` (key and address from the config store). Children get a minimal environment (PATH, HOME, NO_COLOR and what the case needs). svc's code cache for the command in ~/.cache/svc is warm, as it is from a user's second run of that command on; the "first run" row gives each run an empty cache directory (XDG_CACHE_HOME), so svc compiles its bundle from source and writes its caches after it has answered.`,
    '',
  );
  for (const run of startup) {
    lines.push(`### ${run.node}`, '');
    table(
      ['command', 'paired with', 'median ratio', 'IQR', 'median', 'floor median', 'target', ''],
      run.rows.map((s) => [
        s.name,
        s.floor,
        fixed(s.ratio),
        `${fixed(s.ratioP25)}–${fixed(s.ratioP75)}`,
        `${fixed(s.ms, 1)} ms`,
        `${fixed(s.floorMs, 1)} ms`,
        s.target === null ? 'yardstick' : `≤ ${s.target}`,
        s.target === null ? '' : mark(s.ratio <= s.target),
      ]),
    );
  }
  lines.push(...npxColdSection(npx, env.node));

  lines.push('## keys list on a terminal', '');
  lines.push(
    `\`svc keys list\` run under \`script -qfec\` (util-linux), whose pseudo-terminal is set to ${terminal.terminal.columns} columns by \`stty cols ${terminal.terminal.columns} rows ${terminal.terminal.rows}\`, so stdout and stderr are a terminal and the table is drawn, in colour (no NO_COLOR; otherwise the minimal environment above, key and address in SVC_API_KEY and SVC_BASE_URL). One reference server holds a user with 30 keys and one with 5,000, made through the API (varied names, some not ASCII; one in ten expiring, one in seven disabled). Wall time of the whole command, start-up, request and drawing, median of ${terminal.runs} runs per size, sizes taking turns; the floor is the same wrapper around \`node -e 0\`. The bundle measured ${terminal.bundleHasCliTable3 ? 'carries' : 'does not carry'} cli-table3, which only the renderer (src/cli/terminal/renderer.ts) uses.`,
    '',
  );
  table(
    ['keys', 'median', 'min–max', 'columns drawn', 'widest line', 'target', ''],
    [
      ...terminal.cases.map((c) => [
        int(c.keys),
        `${int(c.ms)} ms`,
        `${int(c.min)}–${int(c.max)} ms`,
        c.header.join(', '),
        String(c.widest),
        c.keys >= 5_000 ? `< ${int(TARGETS.keysListTerminalMs)} ms` : '',
        c.keys >= 5_000 ? mark(c.ms < TARGETS.keysListTerminalMs) : '',
      ]),
      ['floor: `script`, `stty`, `node -e 0`', `${int(terminal.floor.ms)} ms`, `${int(terminal.floor.min)}–${int(terminal.floor.max)} ms`, '', '', '', ''],
    ],
  );
  lines.push(
    `The table alone: \`Renderer.table\` (cli-table3, fixed widths, 50-row chunks), bundled as scripts/build.mjs bundles svc, drawing \`keys list\`'s columns for that many synthetic keys at ${tableDraw.terminal.columns} columns with colour, into a stream that discards it. Each sample is a new process drawing one table, as a command does (loading the module not included); median of ${tableDraw.samples}.`,
    '',
  );
  table(
    ['rows', 'Renderer.table', 'min–max'],
    tableDraw.results.map((r) => [int(r.rows), `${fixed(r.ms, 1)} ms`, `${fixed(r.min, 1)}–${fixed(r.max, 1)} ms`]),
  );

  lines.push('## Server throughput', '');
  lines.push(
    `autocannon in the benchmark process, ${CONNECTIONS} connections, no pipelining, ${seconds.throughput} s per run after a 1 s warm-up. Each path is measured in ${seconds.rounds} rounds; a round runs the bare server and each svc build once, in an order that rotates from round to round. Servers are separate processes, so on this ${env.cores}-core machine the server and the load generator each have about one core. The bare server is \`node:http\` answering the same status and JSON body with only Content-Type and Content-Length.`,
    '',
    "The ratio is svc's requests per second over the bare server's in the same round, the median of the rounds with the interquartile range: this machine's speed drifts from minute to minute by more than the difference measured, and a round's two runs share their minute. Requests per second, p50 and p99 are each the median over the rounds; the worst run's p99 is shown too, and every run's below the table. Latencies are autocannon's, each answer's as measured (its response event, to the microsecond), not its histogram's whole milliseconds. Server CPU is the server process's user and system time (all its threads, from /proc) per answer in the run, the median of the rounds, and its ratio to the bare server's in the same round: what the server itself spent on an answer, where requests per second also reflect what the load generator, on the same two cores, spent on reading it.",
    '',
    `The 200 path is \`GET /api/service/user/api-keys\` with a valid key. A Pro workspace admits 1,000 requests a minute, so the load is spread over ${seconds.users} users created through the admin API, each with a Pro workspace of its own; requests rotate through their keys, every run starts in a fresh rate window (the server's clock is advanced to it), and a run is rejected if any answer is not 200. Authentication, the rate limiter and the handler all run on every request. The 429 path is a Free workspace exhausted at the start of the window; the 401 path a well-formed key that does not exist. Any answer with another status fails the run.`,
    '',
  );
  const rows = [];
  const range = ({ median: m, low, high }) => `${fixed(m)} (${fixed(low)}–${fixed(high)})`;
  for (const t of throughput) {
    for (const build of t.builds) {
      rows.push([
        t.name,
        build.label,
        int(build.rps),
        int(t.bare.rps),
        range(build.ratio),
        `${fixed(build.p50, 1)} / ${fixed(build.p99, 1)} ms`,
        `${fixed(build.worstP99, 1)} ms`,
        `${fixed(t.bare.p99, 1)} / ${fixed(t.bare.worstP99, 1)} ms`,
        build.cpuUs === null ? 'n/a' : `${fixed(build.cpuUs, 1)} / ${fixed(t.bare.cpuUs, 1)} µs`,
        build.cpuRatio === null ? 'n/a' : range(build.cpuRatio),
        build.label === 'svc' ? `${mark(build.ratio.median >= TARGETS.throughputRatio)} / ${mark(build.p99 < TARGETS.p99Ms)}` : '',
      ]);
    }
  }
  table(
    [
      'path',
      'server',
      'req/s',
      'bare req/s',
      'ratio (IQR)',
      'p50 / p99',
      'worst p99',
      'bare p99 / worst',
      'server CPU per answer, svc / bare',
      'CPU × bare (IQR)',
      `target ≥ ${TARGETS.throughputRatio}× / p99 < ${TARGETS.p99Ms} ms`,
    ],
    rows,
  );
  lines.push(
    'p99 of each run, in the order of the rounds, ms:',
    '',
    ...throughput.flatMap((t) =>
      [{ label: 'bare', eachP99: t.bare.eachP99 }, ...t.builds].map((build) => `- ${t.name}, ${build.label}: ${build.eachP99.map((ms) => fixed(ms, 1)).join(', ')}`),
    ),
    '',
  );
  if (before) {
    lines.push(
      `"svc before" is commit ${before.commit}, built aside by \`--before\` and measured in the same runs; "svc" is this checkout. The scale table measures it on the large store too.`,
      '',
    );
  }

  lines.push('## Scale', '');
  lines.push(
    'Each store is written straight in the `--data` file format (users with one Pro workspace each; the first user holds 1,000 keys, the rest are spread evenly) and loaded by `svc serve --local --data`. Resident memory is read from /proc once loaded; the peak is the high-water mark after all the measurements below. Listing: sequential `GET /user/api-keys` for the user with 1,000 keys. Authentication: `GET /api/service/workspace` (the cheapest handler) rotating through one key of each of the 1,000 users: one request at a time for latency, the servers of the two stores (both running) taking turns request by request; and with autocannon at 10 connections for throughput, ' +
      `${scale.authRounds} runs of ${seconds.auth} s per store in alternating order (the mean is shown). Create: sequential \`POST /user/api-keys\`, each answered only once its record is appended to the data file's journal and synced. Each store is written as a version 1 file, which the first start migrates to the compact snapshot; start-up is the second start's, the first one's is shown apart.`,
    '',
  );
  const { small, large, others } = scale;
  const scaleRow = (what, pick, target = '', met = '') => [what, pick(small), pick(large), target, met, ...others.map(pick)];
  const authRatio = large.auth.rps / small.auth.rps;
  table(
    ['', `${int(small.keys)} keys`, `${int(large.keys)} keys`, 'target', '', ...others.map((o) => `${int(o.keys)} keys, ${o.label}`)],
    [
      scaleRow('users', (s) => int(s.users)),
      scaleRow('state file', (s) => `${fixed(s.fileMiB, 1)} MiB`),
      scaleRow('first start-up, from the version 1 file it migrates', (s) => `${int(s.firstStartMs)} ms`),
      scaleRow('start-up, spawn to ready line', (s) => `${int(s.startMs)} ms`, `≤ ${TARGETS.largeStartMs} ms with ${int(large.keys)} keys`, mark(large.startMs <= TARGETS.largeStartMs)),
      scaleRow('resident memory once loaded', (s) => `${fixed(s.rssMiB, 0)} MiB`),
      scaleRow('peak resident memory', (s) => `${fixed(s.peakMiB, 0)} MiB`, `≤ ${TARGETS.largePeakMiB} MiB with ${int(large.keys)} keys`, mark(large.peakMiB !== null && large.peakMiB <= TARGETS.largePeakMiB)),
      scaleRow(
        `list 1,000 keys, p50 / p99 of ${large.listCalls}`,
        (s) => `${fixed(s.list.p50, 1)} / ${fixed(s.list.p99, 1)} ms`,
        `p99 < ${TARGETS.managementMs} ms`,
        mark(large.list.p99 < TARGETS.managementMs),
      ),
      scaleRow(
        'authentication, req/s',
        (s) => int(s.auth.rps),
        `≥ ${TARGETS.authRatio}× the small store`,
        `${fixed(authRatio)}×, ${mark(authRatio >= TARGETS.authRatio)}`,
      ),
      scaleRow(
        `authentication, p50 / p99 of ${scale.authPairs} one at a time`,
        (s) => (s.authLatency ? `${fixed(s.authLatency.p50)} / ${fixed(s.authLatency.p99)} ms` : 'not measured'),
        `p50 ≤ ${TARGETS.authLatencyRatio}× the small store`,
        `${fixed(large.authLatency.p50 / small.authLatency.p50)}×, ${mark(large.authLatency.p50 <= TARGETS.authLatencyRatio * small.authLatency.p50)}`,
      ),
      scaleRow(
        `create with --data, p50 / max of ${large.creates}`,
        (s) => `${fixed(s.create.p50, 1)} / ${fixed(s.create.max, 1)} ms`,
        `p50 ≤ ${TARGETS.createP50Ratio}× the small store; max < ${TARGETS.managementMs} ms`,
        `${fixed(large.create.p50 / small.create.p50)}×, ${mark(large.create.p50 <= TARGETS.createP50Ratio * small.create.p50)}; ${mark(large.create.max < TARGETS.managementMs)}`,
      ),
    ],
  );

  lines.push('## keys list of 100,000 keys', '');
  lines.push(...bigListReport(bigList, int, fixed));

  lines.push('## Limiter exactness', '');
  lines.push(
    `${limiter.requests} requests at once, each on its own connection, against one Free workspace at the start of a fresh window; ${limiter.rounds.length} rounds.`,
    '',
  );
  table(
    ['round', 'admitted (200)', 'refused (429)', 'other', 'target', ''],
    limiter.rounds.map((r, i) => [
      String(i + 1),
      String(r.admitted),
      String(r.limited),
      String(r.other),
      `exactly ${TARGETS.limiterAdmits}`,
      mark(r.admitted === TARGETS.limiterAdmits && r.other === 0),
    ]),
  );

  if (scan) {
    lines.push('## svc scan of a tree', '', ...scanTreeReport(scan.tree));
    lines.push('## svc scan --git of a history', '', ...scanGitReport(scan.git));
    lines.push('## svc scan, verifying what it found', '', ...scanVerifyReport(scan.verify));
  }
  return lines.join('\n');
}

const started = Date.now();
if (!existsSync(join(ROOT, 'dist', 'main.js'))) throw new Error('dist/main.js is missing: run `npm run build` first (npm run bench does)');
const env = { ...machine(), commit: commitOf(ROOT) };
const seconds = { throughput: 3, rounds: 6, users: 400, auth: 3 };
let before = null;
try {
  if (values.before) {
    log(`building ${values.before} for comparison…`);
    before = buildRef(values.before);
  }
  log('CLI start-up…');
  const startup = [];
  for (const node of [process.execPath, ...values.node]) startup.push(await benchStartup({ pairs: 30, node }));
  log('npx, cold…');
  const npx = benchNpxCold({ rounds: 7 });
  log('keys list on a terminal…');
  const terminal = await benchKeysListTerminal({ runs: 15 });
  const tableDraw = await benchRenderTable({ samples: 15 });
  log('server throughput…');
  const builds = [{ label: 'svc', bin: SVC_BIN }, ...(before ? [{ label: 'svc before', bin: before.bin }] : [])];
  const throughput = await benchThroughput({ seconds: seconds.throughput, rounds: seconds.rounds, users: seconds.users, builds });
  log('scale…');
  const scale = await benchScale({ authSeconds: seconds.auth, authRounds: 4, authPairs: 1000, listCalls: 100, creates: 10, builds });
  log('keys list of 100,000 keys…');
  const bigList = await benchBigList({ keys: 100_000, runs: 3 });
  log('limiter…');
  const limiter = await benchLimiter({ requests: 1000, rounds: 3 });
  let scan = null;
  if (!values['no-scan']) {
    log('svc scan: a tree, a history, verification…');
    scan = {
      tree: await benchScanTree({ rounds: 5, log }),
      git: await benchScanGit({ rounds: 5, log }),
      verify: [await benchScanVerify({ rounds: 3, latencyMs: 0, log }), await benchScanVerify({ rounds: 3, latencyMs: 50, log })],
    };
  }
  env.loadAverageAtEnd = machine().loadAverage;

  const flags = [...(values.before ? ['--before', values.before] : []), ...values.node.flatMap((n) => ['--node', n]), ...(values['no-scan'] ? ['--no-scan'] : [])];
  const command = `npm run bench${flags.length ? ` -- ${flags.join(' ')}` : ''}`;
  const text = report({ env, command, startup, npx, terminal, tableDraw, throughput, scale, bigList, limiter, scan, before, seconds });
  writeFileSync(join(ROOT, 'bench', 'RESULTS.md'), `${text}\nWhole run: ${Math.round((Date.now() - started) / 1000)} s.\n`);
  process.stdout.write(`${text}\n`);
  log(`wrote bench/RESULTS.md in ${Math.round((Date.now() - started) / 1000)} s`);
} finally {
  if (before) rmSync(before.dir, { recursive: true, force: true });
}
