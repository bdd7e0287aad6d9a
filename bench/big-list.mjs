// `svc keys list` of an account of 100,000 keys against the reference
// server (issue 23): wall time of the command, the peak resident memory of
// svc and of the server, the longest the server's event loop was held while
// it served the pages, and the longest an unrelated request (GET
// /_local/clock, sent every few milliseconds meanwhile) waited for its answer,
// and the slowest page by the server's own request log.
//
//   node bench/big-list.mjs [--keys N] [--runs N]   (after npm run build)
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { writeManyKeys } from '../test/helpers/many-keys.mjs';
import { ADMIN_TOKEN, call, childEnv, elapsedMs, median, memoryOf, ROOT, SVC_BIN } from './lib.mjs';
import { serveProcess } from '../test/helpers/reference-server.mjs';

const MONITOR = join(ROOT, 'bench', 'loop-monitor.cjs');

/** Runs `node bin args` to its end, its stdout kept, with the monitor preloaded; resolves with the time it took and what it reported. */
function timedSvc(bin, args, env, monitorFile) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, ['--require', MONITOR, bin, ...args], {
      cwd: ROOT,
      env: { ...env, SVC_BENCH_MONITOR: monitorFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = [];
    let err = '';
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.once('error', reject);
    child.once('exit', (code) => {
      const ms = elapsedMs(started);
      if (code !== 0) return reject(new Error(`svc ${args.join(' ')} exited ${code}: ${err}`));
      resolve({ ms, stdout: Buffer.concat(out).toString('utf8'), monitor: JSON.parse(readFileSync(monitorFile, 'utf8')) });
    });
  });
}

/** Asks the server's monitor for its figures since the last ask, and waits for them to be written. */
async function serverFigures(pid, file) {
  const before = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).reports : 0;
  process.kill(pid, 'SIGUSR2');
  for (;;) {
    if (existsSync(file)) {
      const stats = JSON.parse(readFileSync(file, 'utf8'));
      if (stats.reports > before) return stats;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Unrelated requests, one after another until `stop()`, each timed: the longest is what the list made others wait. */
function probe(url) {
  let running = true;
  const times = [];
  const done = (async () => {
    while (running) {
      const started = process.hrtime.bigint();
      const res = await call(url, 'GET', '/_local/clock', ADMIN_TOKEN);
      if (res.status !== 200) throw new Error(`probe answered ${res.status}`);
      times.push(elapsedMs(started));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
  return async () => {
    running = false;
    await done;
    return { max: Math.max(...times), count: times.length };
  };
}

/** Every page of the list, read with plain requests as svc reads them: the server's side of a `keys list`. */
async function walkPages(url, key) {
  let path = '/api/service/user/api-keys';
  let count = 0;
  for (;;) {
    const res = await call(url, 'GET', path, key);
    if (res.status !== 200) throw new Error(`a page answered ${res.status}`);
    count += res.json.keys.length;
    if (res.json.nextCursor === null) return count;
    path = `/api/service/user/api-keys?cursor=${encodeURIComponent(res.json.nextCursor)}`;
  }
}

/** `LISTS` whole lists at once, as the issue's ten concurrent `keys list` were: what the server held, and what it made others wait. */
const LISTS = 10;
async function concurrentLists(url, key, pid, monitorFile, keys) {
  await call(url, 'POST', '/_local/clock', ADMIN_TOKEN, { advanceSeconds: 60 });
  await serverFigures(pid, monitorFile);
  const stop = probe(url);
  const started = process.hrtime.bigint();
  const counts = await Promise.all(Array.from({ length: LISTS }, () => walkPages(url, key)));
  const ms = elapsedMs(started);
  const waited = await stop();
  const figures = await serverFigures(pid, monitorFile);
  if (counts.some((n) => n !== keys)) throw new Error(`concurrent lists read ${counts.join(', ')} keys, not ${keys} each`);
  return { lists: LISTS, ms, serverBlockMs: figures.maxBlockMs, probeMaxMs: waited.max };
}

export async function benchBigList({ keys = 100_000, runs = 3, bin = SVC_BIN } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-big-list-'));
  const serverMonitor = join(dir, 'server.json');
  const svcMonitor = join(dir, 'svc.json');
  try {
    const { secret } = writeManyKeys(join(dir, 'state.json'), { keys, plan: 'pro' });
    const server = await serveProcess(['--admin-token', ADMIN_TOKEN, '--data', join(dir, 'state.json')], {
      bin,
      cwd: ROOT,
      env: childEnv({ NODE_OPTIONS: `--require ${MONITOR}`, SVC_BENCH_MONITOR: serverMonitor }),
    });
    const pid = server.child.pid;
    try {
      const loaded = memoryOf(pid);
      const env = childEnv({ SVC_BASE_URL: server.url, SVC_API_KEY: secret, SVC_CONFIG_DIR: join(dir, 'config') });
      const cases = [];
      for (const [name, args, count] of [
        ['keys list --json', ['keys', 'list', '--json'], (out) => JSON.parse(out).keys.length],
        ['keys list (TSV, rows as pages come)', ['keys', 'list'], (out) => out.split('\n').length - 2],
      ]) {
        const samples = [];
        for (let run = 0; run < runs; run++) {
          // Each page is a request: a fresh rate window for each run keeps a Pro workspace's 1,000 a minute out of the way.
          await call(server.url, 'POST', '/_local/clock', ADMIN_TOKEN, { advanceSeconds: 60 });
          await serverFigures(pid, serverMonitor);
          const stop = probe(server.url);
          const result = await timedSvc(bin, args, env, svcMonitor);
          const waited = await stop();
          const figures = await serverFigures(pid, serverMonitor);
          const log = await call(server.url, 'GET', '/_local/requests?limit=1000', ADMIN_TOKEN);
          const pages = log.json.requests.filter((r) => r.path === '/api/service/user/api-keys').slice(0, keys / 1000);
          const listed = count(result.stdout);
          if (listed !== keys) throw new Error(`svc ${args.join(' ')} listed ${listed} keys, not ${keys}`);
          samples.push({
            ms: result.ms,
            svcPeakMiB: result.monitor.peakRssMiB,
            serverBlockMs: figures.maxBlockMs,
            probeMaxMs: waited.max,
            slowestPageMs: Math.max(...pages.map((r) => r.ms)),
          });
        }
        cases.push({
          name,
          ms: median(samples.map((s) => s.ms)),
          min: Math.min(...samples.map((s) => s.ms)),
          max: Math.max(...samples.map((s) => s.ms)),
          svcPeakMiB: Math.max(...samples.map((s) => s.svcPeakMiB)),
          serverBlockMs: Math.max(...samples.map((s) => s.serverBlockMs)),
          probeMaxMs: Math.max(...samples.map((s) => s.probeMaxMs)),
          slowestPageMs: Math.max(...samples.map((s) => s.slowestPageMs)),
        });
      }
      const concurrent = await concurrentLists(server.url, secret, pid, serverMonitor, keys);
      const serverPeak = (await serverFigures(pid, serverMonitor)).peakRssMiB;
      // What the issue asks of it, word for word, through a shell and jq where they are.
      const jq = spawnSync('sh', ['-c', `node '${bin}' keys list --json | jq '.keys|length'`], { env, encoding: 'utf8' });
      const jqSays = jq.status === 0 ? jq.stdout.trim() : null;
      return { keys, runs, cases, concurrent, loadedMiB: loaded?.rssMiB ?? NaN, serverPeakMiB: serverPeak, jqSays };
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The section of bench/RESULTS.md. */
export function bigListReport(result, int, fixed) {
  const lines = [
    `One user of ${int(result.keys)} keys (a Pro workspace) in a \`--data\` file written straight in its format (test/helpers/many-keys.mjs), served by \`svc serve --local --data\` in pages of 1,000. Each command is a child process; ${result.runs} runs each, the median time with the range. Peak memory is each process's own high-water mark (\`process.resourceUsage().maxRSS\`, read by bench/loop-monitor.cjs preloaded with \`--require\`); the server's includes loading the file. The longest block is the largest delay of a 1 ms timer in the server (\`monitorEventLoopDelay\`) while the command ran, start-up left out; meanwhile the bench sent \`GET /_local/clock\` one after another, and the longest any of them took is the next column. The slowest page is the largest \`ms\` (arrival to answer sent) of the list requests in the server's request log. The machine's load average is in the table at the top: on a shared machine a timer's delay includes time the process was not scheduled at all.`,
    '',
    '| command | median | min–max | svc peak RSS | server peak RSS | longest event-loop block in the server | longest wait of an unrelated request | slowest page |',
    '|---|---|---|---|---|---|---|---|',
    ...result.cases.map(
      (c) =>
        `| \`svc ${c.name}\` | ${int(c.ms)} ms | ${int(c.min)}–${int(c.max)} ms | ${fixed(c.svcPeakMiB, 0)} MiB | ${fixed(result.serverPeakMiB, 0)} MiB | ${fixed(c.serverBlockMs, 1)} ms | ${fixed(c.probeMaxMs, 1)} ms | ${int(c.slowestPageMs)} ms |`,
    ),
    '',
    `${result.concurrent.lists} whole lists at once, each page read by the bench's own HTTP client as svc reads it: ${int(result.concurrent.ms)} ms for all, the server's longest event-loop block ${fixed(result.concurrent.serverBlockMs, 1)} ms, an unrelated request's longest wait ${fixed(result.concurrent.probeMaxMs, 1)} ms. Resident memory of the server once loaded: ${fixed(result.loadedMiB, 0)} MiB. \`svc keys list --json | jq '.keys|length'\` printed ${result.jqSays === null ? '(jq not found)' : `\`${result.jqSays}\``}.`,
    '',
  ];
  return lines;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { keys: { type: 'string', default: '100000' }, runs: { type: 'string', default: '3' } } });
  const result = await benchBigList({ keys: Number(values.keys), runs: Number(values.runs) });
  const int = (n) => Math.round(n).toLocaleString('en-US');
  const fixed = (n, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
  process.stdout.write(`${bigListReport(result, int, fixed).join('\n')}\n`);
  writeFileSync(join(tmpdir(), 'svc-bench-big-list.json'), JSON.stringify(result, null, 2));
}
