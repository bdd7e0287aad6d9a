// `svc keys list` as a person sees it, on an 80-column terminal, with 30
// keys and with 5,000; and Renderer.table (src/cli/terminal/renderer.ts) alone for the
// same sizes. Run on its own: node bench/render.mjs (needs a built dist/);
// node bench/render.mjs --width-patch weighs scripts/table-plugins.mjs's tableWidth.
//
// The command runs under `script` from util-linux, so stdout and stderr are
// a pseudo-terminal sized by `stty cols 80 rows 24`, in a child with a
// minimal environment; the figure is the wall time of the whole command,
// start-up, request and drawing, plus what `script` and `stty` cost, which
// the floor row (the same wrapper around `node -e 0`) shows.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { tablePlugins } from '../scripts/table-plugins.mjs';
import { childEnv, median, ROOT, SVC_BIN, startSvcServer } from './lib.mjs';

const TERMINAL = { columns: 80, rows: 24 };

const quote = (arg) => `'${arg.replaceAll("'", "'\\''")}'`;

/** One run of `command` on a fresh pseudo-terminal of TERMINAL's size: its wall time and what it printed. */
function onTerminal(command, env) {
  const shell = `stty cols ${TERMINAL.columns} rows ${TERMINAL.rows} && exec ${command.map(quote).join(' ')}`;
  const started = process.hrtime.bigint();
  const result = spawnSync('script', ['-qfec', shell, '/dev/null'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`${command.join(' ')} on a terminal exited ${result.status}: ${result.stdout}${result.stderr}`);
  return { ms, output: String(result.stdout) };
}

/**
 * A new Pro user holding `count` keys, made through the API as a person
 * would: varied names (a few not ASCII), one in ten expiring, one in seven
 * disabled. A Pro workspace admits 1,000 requests a minute, so the server's
 * clock is moved to a fresh window before each batch.
 */
async function seedUser(server, count) {
  const created = await server.admin('POST', '/users', { name: `bench ${count}`, plan: 'pro' });
  const key = created.json.apiKey.secret;
  const now = Date.parse((await server.admin('GET', '/clock')).json.now);
  const NAMES = ['ci-deploy', 'laptop', 'nightly batch', 'staging', 'render-farm', '日本語のキー', 'grafana'];
  const jobs = [];
  for (let i = 1; i < count; i++) {
    const body = { name: `${NAMES[i % NAMES.length]}-${i}` };
    if (i % 10 === 0) body.expiresAt = new Date(now + (i % 90) * 86_400_000 + 86_400_000).toISOString();
    jobs.push({ body, disable: i % 7 === 0 });
  }
  const BATCH = 450;
  const WORKERS = 8;
  for (let start = 0; start < jobs.length; start += BATCH) {
    await server.startOfNextWindow();
    const batch = jobs.slice(start, start + BATCH);
    let next = 0;
    await Promise.all(
      Array.from({ length: WORKERS }, async () => {
        while (next < batch.length) {
          const job = batch[next++];
          const made = await server.api('POST', '/user/api-keys', key, job.body);
          if (made.status !== 201) throw new Error(`creating a key answered ${made.status}: ${made.text}`);
          if (job.disable) {
            const off = await server.api('PATCH', `/user/api-keys/${made.json.id}`, key, { enabled: false });
            if (off.status !== 200) throw new Error(`disabling a key answered ${off.status}: ${off.text}`);
          }
        }
      }),
    );
  }
  await server.startOfNextWindow();
  return key;
}

const stripTerminal = (text) => text.replace(/\x1b\[[0-9;]*m/g, '').replace(/\r/g, '');

/**
 * `svc keys list` on the terminal against one reference server holding a
 * user with 30 keys and one with 5,000, `runs` times each, the sizes taking
 * turns; the floor is `script`, `stty` and `node -e 0`. Colour is on, as on
 * a person's terminal (no NO_COLOR). `bin` may be another build's bin/svc.js.
 */
export async function benchKeysListTerminal({ runs, sizes = [30, 5_000], bin = SVC_BIN }) {
  const work = mkdtempSync(join(tmpdir(), 'svc-bench-render-'));
  const server = await startSvcServer(['--plan', 'pro']);
  try {
    const { NO_COLOR: _, ...base } = childEnv({ SVC_CONFIG_DIR: work, SVC_BASE_URL: server.url, TERM: 'xterm-256color' });
    const cases = [];
    for (const keys of sizes) cases.push({ keys, env: { ...base, SVC_API_KEY: await seedUser(server, keys) } });
    const command = [process.execPath, bin, 'keys', 'list'];
    const floorCommand = [process.execPath, '-e', '0'];
    for (const c of cases) {
      // Not measured: warms the page cache, the compile cache and the server's list path; and checks what is drawn.
      const { output } = onTerminal(command, c.env);
      const lines = stripTerminal(output).trimEnd().split('\n');
      const rows = lines.filter((l) => /^[* ] key_/.test(l));
      if (rows.length !== c.keys) throw new Error(`keys list drew ${rows.length} rows for ${c.keys} keys:\n${lines.slice(0, 5).join('\n')}`);
      c.widest = Math.max(...lines.map((l) => [...l].length));
      c.header = lines[0].trim().split(/ {2,}/);
      c.times = [];
    }
    const floor = [];
    onTerminal(floorCommand, base);
    for (let i = 0; i < runs; i++) {
      const order = i % 2 === 0 ? cases : [...cases].reverse();
      for (const c of order) c.times.push(onTerminal(command, c.env).ms);
      floor.push(onTerminal(floorCommand, base).ms);
    }
    // The marker scripts/table-plugins.mjs leaves in a bundle that carries cli-table3.
    const bundleHasCliTable3 = readFileSync(join(dirname(bin), '..', 'dist', 'main.js'), 'utf8').includes('leaves out @colors/colors');
    return {
      runs,
      terminal: TERMINAL,
      bundleHasCliTable3,
      floor: { ms: median(floor), min: Math.min(...floor), max: Math.max(...floor) },
      cases: cases.map((c) => ({ keys: c.keys, ms: median(c.times), min: Math.min(...c.times), max: Math.max(...c.times), widest: c.widest, header: c.header })),
    };
  } finally {
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** What each child runs: one table drawn cold, as a command draws it, timed. */
const TABLE_CHILD = `
import { Writable } from 'node:stream';
const [, , bundle, count] = process.argv;
const { createRenderer } = await import(bundle);
let bytes = 0;
const sink = new Writable({ write(chunk, _, done) { bytes += chunk.length; done(); } });
const io = { stdout: sink, stderr: sink, stdin: null, stdinIsTTY: false, stdoutIsTTY: true, stderrIsTTY: true, colorStdout: true, colorStderr: true, columns: ${TERMINAL.columns}, rows: ${TERMINAL.rows}, env: {} };
const names = ['ci-deploy', 'laptop', 'nightly batch', 'staging', 'render-farm', '日本語のキー', 'grafana'];
const rows = Array.from({ length: Number(count) }, (_, i) => ({
  id: 'key_' + String(i).padStart(20, '0'),
  name: names[i % names.length] + '-' + i,
  hint: 'sk_ab12…wx' + String(i % 100).padStart(2, '0'),
  status: i % 7 === 0 ? 'disabled' : 'enabled',
  workspace: 'ws_' + 'a'.repeat(20),
  created: i % 3 === 0 ? '3 minutes ago' : '2 days ago',
  expires: i % 10 === 0 ? 'in 3 months' : 'never',
  used: 'never',
}));
// The columns of keys list, with its ranks.
const spec = [
  ['ID', (k) => '  ' + k.id], ['NAME', (k) => k.name, 24], ['KEY', (k) => k.hint, undefined, 5, 'dim'],
  ['STATUS', (k) => k.status, undefined, undefined, 'green'], ['WORKSPACE', (k) => k.workspace, undefined, 2],
  ['CREATED', (k) => k.created, undefined, 1], ['EXPIRES', (k) => k.expires, undefined, 3], ['LAST USED', (k) => k.used, undefined, 4],
];
const columns = spec.map(([header, get, maxWidth, dropRank, tone]) => ({
  header, maxWidth, dropRank, plain: get, human: tone ? (k) => ({ text: get(k), tone }) : get,
}));
// Made before the clock starts: making it loads chalk and cli-table3 for the terminal.
const renderer = await createRenderer(io, { quiet: false });
const started = process.hrtime.bigint();
renderer.table(columns, rows);
const ms = Number(process.hrtime.bigint() - started) / 1e6;
process.stdout.write(JSON.stringify({ ms, bytes }));
`;

/**
 * Renderer.table alone, 80 columns, colour on, for each size: each sample a
 * new child process that loads the bundled renderer and draws one table, so
 * the figure is a cold draw as a command makes it (module loading not
 * included). `variants` names the esbuild plugins of each bundle to compare,
 * the variants taking turns within each sample; by default the bundle's own.
 */
export async function benchRenderTable({ samples, sizes = [30, 5_000], variants = { bundle: tablePlugins } }) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-table-'));
  try {
    const entry = join(dir, 'entry.ts');
    writeFileSync(entry, `export { createRenderer } from '${ROOT}src/cli/terminal/renderer.ts';\n`);
    const bundles = {};
    for (const [name, plugins] of Object.entries(variants)) {
      bundles[name] = join(dir, `render-${name}.mjs`);
      // As scripts/build.mjs builds the CLI, but for an ES module this script can import.
      await build({
        entryPoints: [entry],
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20.18',
        minify: true,
        outfile: bundles[name],
        plugins,
        logLevel: 'warning',
      });
    }
    const child = join(dir, 'child.mjs');
    writeFileSync(child, TABLE_CHILD);
    const measure = (bundle, rows) => {
      const out = execFileSync(process.execPath, [child, pathToFileURL(bundle).href, String(rows)], { env: childEnv(), encoding: 'utf8' });
      return JSON.parse(out).ms;
    };
    const names = Object.keys(bundles);
    const results = [];
    for (const rows of sizes) {
      const times = Object.fromEntries(names.map((name) => [name, []]));
      for (const name of names) measure(bundles[name], rows);
      for (let i = 0; i < samples; i++) {
        for (const name of i % 2 === 0 ? names : [...names].reverse()) times[name].push(measure(bundles[name], rows));
      }
      for (const name of names) results.push({ variant: name, rows, ms: median(times[name]), min: Math.min(...times[name]), max: Math.max(...times[name]), times: times[name] });
    }
    return { samples, terminal: TERMINAL, results };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === '--width-patch') {
    // Whether scripts/table-plugins.mjs's tableWidth still pays: Renderer.table with the bundle's
    // plugins and with all but it, in turns, then the whole command the difference is a part of.
    const { tableWidth } = await import('../scripts/table-plugins.mjs');
    const variants = { patched: tablePlugins, 'string-width': tablePlugins.filter((plugin) => plugin !== tableWidth) };
    const table = await benchRenderTable({ samples: 15, sizes: [5_000], variants });
    const [patched, original] = table.results;
    const saved = median(original.times.map((ms, i) => ms - patched.times[i]));
    const ratio = median(original.times.map((ms, i) => ms / patched.times[i]));
    for (const r of table.results) console.log(`Renderer.table 5000 rows, ${r.variant}: median ${r.ms.toFixed(1)} ms (${r.min.toFixed(1)}–${r.max.toFixed(1)})`);
    const list = await benchKeysListTerminal({ runs: 8, sizes: [5_000] });
    const command = list.cases[0].ms;
    console.log(`string-width/patched ×${ratio.toFixed(2)}; the patch saves ${saved.toFixed(0)} ms of keys list's ${command.toFixed(0)} ms for 5000 keys (${((100 * saved) / command).toFixed(1)}%)`);
  } else {
    const table = await benchRenderTable({ samples: 10 });
    for (const r of table.results) console.log(`Renderer.table ${r.rows} rows: median ${r.ms.toFixed(1)} ms (${r.min.toFixed(1)}–${r.max.toFixed(1)})`);
    const list = await benchKeysListTerminal({ runs: 10 });
    console.log(`floor (script, stty, node -e 0): median ${list.floor.ms.toFixed(0)} ms; the bundle ${list.bundleHasCliTable3 ? 'carries' : 'does not carry'} cli-table3`);
    for (const c of list.cases) console.log(`keys list, ${c.keys} keys: median ${c.ms.toFixed(0)} ms (${c.min.toFixed(0)}–${c.max.toFixed(0)}), widest line ${c.widest}, columns ${c.header.join(' | ')}`);
  }
}
