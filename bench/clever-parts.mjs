// Whether svc's start-up parts still pay, each against svc as built, in one
// run: svc's own V8 code cache (bin/load-bundle.js) against
// NODE_DISABLE_COMPILE_CACHE=1, and WebAssembly on V8's baseline tier only
// (src/client/v8-flags.ts) against V8's default tiering, in a copy of the
// package whose bundle asks for the default instead. The yardstick, in the
// same rounds: bench/floor-request.cjs, one bare undici GET of the same list.
//
//   node bench/clever-parts.mjs [--node path] [--rounds 30] [--keys 30]
//
// `svc keys list --json` against `svc serve --local` (the server under the
// benchmark's own Node), key and address in SVC_API_KEY and SVC_BASE_URL.
// Children get only PATH and HOME and what the case needs (NODE_EXTRA_CA_CERTS
// and the like add to every Node start). Each round runs every case once, in
// an order that turns from round to round, under GNU time (/usr/bin/time),
// which gives its CPU time (user and system) and peak memory; each figure is
// a median, and each ratio the median of the per-round ratios to svc as
// built, with the interquartile range. CPU time says more than wall time on
// a machine shared with other work, which stretches a wall time by whatever
// else ran meanwhile. Code caches are warm, as from a user's second run of
// the command on.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { median, quantile, ROOT, startSvcServer } from './lib.mjs';

const { values } = parseArgs({
  options: { node: { type: 'string', default: process.execPath }, rounds: { type: 'string', default: '30' }, keys: { type: 'string', default: '30' } },
});
const node = values.node;
const rounds = Number(values.rounds);

const work = mkdtempSync(join(tmpdir(), 'svc-bench-clever-'));
const timeFile = join(work, 'time');

/** One run of `node args` in `env`: wall and CPU time in ms, peak resident memory in MiB. */
function run(args, env) {
  const started = process.hrtime.bigint();
  const result = spawnSync('/usr/bin/time', ['-f', '%U %S %M', '-o', timeFile, node, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`${node} ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  const [user, system, kib] = readFileSync(timeFile, 'utf8').trim().split('\n').at(-1).split(' ').map(Number);
  return { ms, cpuMs: (user + system) * 1000, rssMiB: kib / 1024 };
}

const server = await startSvcServer(['--plan', 'pro']);
try {
  for (let i = 1; i < Number(values.keys); i++) await server.api('POST', '/user/api-keys', server.apiKey, { name: `bench-${i}` });

  // The same package with the one V8 flag svc sets replaced by its default.
  const tiered = join(work, 'tiered');
  for (const part of ['bin', 'dist', 'package.json']) cpSync(join(ROOT, part), join(tiered, part), { recursive: true });
  const bundle = join(tiered, 'dist', 'main.js');
  const source = readFileSync(bundle, 'latin1');
  const flag = '"--liftoff-only"';
  if (source.split(flag).length !== 2) throw new Error(`dist/main.js does not set ${flag} once: bench/clever-parts.mjs cannot turn it off`);
  writeFileSync(bundle, source.replace(flag, '"--no-liftoff-only"'), 'latin1');

  const env = (name, extra = {}) => ({
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    XDG_CACHE_HOME: join(work, `cache-${name}`),
    SVC_CONFIG_DIR: join(work, `config-${name}`),
    SVC_API_KEY: server.apiKey,
    SVC_BASE_URL: server.url,
    ...extra,
  });
  const svc = join(ROOT, 'bin', 'svc.js');
  const list = ['keys', 'list', '--json'];
  const cases = [
    { name: 'svc as built', args: [svc, ...list], env: env('built') },
    { name: 'no code cache (NODE_DISABLE_COMPILE_CACHE=1)', args: [svc, ...list], env: env('off', { NODE_DISABLE_COMPILE_CACHE: '1' }) },
    { name: 'default wasm tiering (no --liftoff-only)', args: [join(tiered, 'bin', 'svc.js'), ...list], env: env('tiered') },
    { name: 'yardstick: bench/floor-request.cjs', args: [join(ROOT, 'bench', 'floor-request.cjs')], env: env('floor') },
  ];
  for (const c of cases) c.runs = [];
  // Not measured: writes the code caches, warms the page cache and the server.
  for (let i = 0; i < 3; i++) for (const c of cases) run(c.args, c.env);
  for (let round = 0; round < rounds; round++) {
    for (let j = 0; j < cases.length; j++) {
      const c = cases[(round + j) % cases.length];
      c.runs.push(run(c.args, c.env));
    }
  }
  const [built] = cases;
  console.log(`client ${node} (${process.version} serves), ${rounds} rounds, keys list --json of ${values.keys} keys, load average ${loadavg()[0].toFixed(2)} after`);
  const figure = (c, field, digits) => {
    const of = c.runs.map((r) => r[field]);
    const ratios = of.map((value, i) => value / built.runs[i][field]);
    const ratio = c === built ? '' : ` ×${median(ratios).toFixed(2)} (${quantile(ratios, 0.25).toFixed(2)}–${quantile(ratios, 0.75).toFixed(2)})`;
    return `${median(of).toFixed(digits)}${ratio}`.padEnd(28);
  };
  console.log(`  ${'case'.padEnd(46)} ${'wall ms'.padEnd(28)} ${'CPU ms'.padEnd(28)} peak MiB`);
  for (const c of cases) console.log(`  ${c.name.padEnd(46)} ${figure(c, 'ms', 1)} ${figure(c, 'cpuMs', 0)} ${figure(c, 'rssMiB', 1)}`);
} finally {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}
