// Start-up of two builds of svc against each other, paired as
// bench/startup.mjs pairs svc with its floors: each pair runs both, in
// alternating order, and the figure is the median of the per-pair ratios
// B/A of their wall times.
// For finding which change made a command slower: build the older commit in
// a worktree of its own, then
//
//   node bench/startup-ab.mjs <old>/bin/svc.js bin/svc.js [--pairs 40] [--key env|profile] [--node path]
//
// Both run `keys list --json` against one reference server, with the key in
// SVC_API_KEY (env) or saved by `svc login` in a config directory of each
// build's own (profile); HOME is the real one, so the compile caches are warm.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { childEnv, median, quantile, startSvcServer } from './lib.mjs';
import { timed } from './startup.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { pairs: { type: 'string', default: '40' }, key: { type: 'string', default: 'env' }, node: { type: 'string', default: process.execPath } },
});
const [a, b] = positionals;
if (!a || !b || !['env', 'profile'].includes(values.key)) {
  console.error('usage: node bench/startup-ab.mjs A/bin/svc.js B/bin/svc.js [--pairs N] [--key env|profile] [--node path]');
  process.exit(2);
}
const node = values.node;
const server = await startSvcServer(['--plan', 'pro']);
const work = mkdtempSync(join(tmpdir(), 'svc-bench-ab-'));
try {
  const envFor = (bin, i) => {
    const configDir = join(work, `config-${i}`);
    if (values.key === 'env') return childEnv({ SVC_CONFIG_DIR: configDir, SVC_API_KEY: server.apiKey, SVC_BASE_URL: server.url });
    const env = childEnv({ SVC_CONFIG_DIR: configDir });
    timed(node, [bin, 'login', '--with-key', '--base-url', server.url], env, `${server.apiKey}\n`);
    return env;
  };
  const sides = [a, b].map((bin, i) => ({ bin, env: envFor(bin, i), ms: [] }));
  const run = (side) => timed(node, [side.bin, 'keys', 'list', '--json'], side.env);
  // Warm the page cache, the compile caches and the server; not measured.
  for (let i = 0; i < 5; i++) sides.forEach(run);
  const ratios = [];
  for (let i = 0; i < Number(values.pairs); i++) {
    const order = i % 2 === 0 ? [0, 1] : [1, 0];
    const ms = [];
    for (const j of order) ms[j] = run(sides[j]);
    ratios.push(ms[1] / ms[0]);
    sides.forEach((side, j) => side.ms.push(ms[j]));
  }
  console.log(`keys list --json, key in ${values.key === 'env' ? 'SVC_API_KEY' : 'the saved profile'}, ${values.pairs} pairs, ${node}`);
  console.log(
    `A ${median(sides[0].ms).toFixed(1)} ms  B ${median(sides[1].ms).toFixed(1)} ms  B/A ${median(ratios).toFixed(3)} (IQR ${quantile(ratios, 0.25).toFixed(3)}–${quantile(ratios, 0.75).toFixed(3)})`,
  );
} finally {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}
