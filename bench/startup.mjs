// CLI start-up against `node -e 0`, the floor any Node CLI stands on. Each
// measured run is paired with a baseline run next to it, the order inside a pair
// alternates (so drift in the machine's speed hits both sides alike), and
// the figure is the median of the per-pair ratios.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childEnv, median, quantile, ROOT, SVC_BIN, startSvcServer } from './lib.mjs';

function timed(args, env) {
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) {
    throw new Error(`node ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  }
  return ms;
}

export async function benchStartup({ pairs }) {
  const configDir = mkdtempSync(join(tmpdir(), 'svc-bench-config-'));
  const server = await startSvcServer(['--plan', 'pro']);
  try {
    const baseEnv = childEnv({ SVC_CONFIG_DIR: configDir });
    const listEnv = childEnv({ SVC_CONFIG_DIR: configDir, SVC_API_KEY: server.apiKey, SVC_BASE_URL: server.url });
    // The last two are yardsticks, not svc: the cost of any ES module entry point (bin/svc.js is one),
    // and of loading undici, the HTTP client svc's API commands use.
    writeFileSync(join(configDir, 'empty.mjs'), '');
    const cases = [
      { name: 'svc --version', args: [SVC_BIN, '--version'], env: baseEnv, target: 1.15 },
      { name: 'svc keys list --json', args: [SVC_BIN, 'keys', 'list', '--json'], env: listEnv, target: 1.4 },
      { name: 'node empty.mjs', args: [join(configDir, 'empty.mjs')], env: baseEnv, target: null },
      { name: 'node -e "import(\'undici\')"', args: ['-e', "import('undici')"], env: baseEnv, target: null },
    ];
    const baseline = ['-e', '0'];

    // Warm the page cache and the server's first-request paths; not measured.
    for (let i = 0; i < 3; i++) {
      timed(baseline, baseEnv);
      for (const c of cases) timed(c.args, c.env);
    }

    const samples = cases.map(() => ({ ratios: [], measured: [], node: [] }));
    for (let i = 0; i < pairs; i++) {
      cases.forEach((c, j) => {
        let node;
        let measured;
        if (i % 2 === 0) {
          node = timed(baseline, baseEnv);
          measured = timed(c.args, c.env);
        } else {
          measured = timed(c.args, c.env);
          node = timed(baseline, baseEnv);
        }
        samples[j].node.push(node);
        samples[j].measured.push(measured);
        samples[j].ratios.push(measured / node);
      });
    }
    return cases.map((c, j) => ({
      name: c.name,
      target: c.target,
      pairs,
      ratio: median(samples[j].ratios),
      ratioP25: quantile(samples[j].ratios, 0.25),
      ratioP75: quantile(samples[j].ratios, 0.75),
      ms: median(samples[j].measured),
      nodeMs: median(samples[j].node),
    }));
  } finally {
    await server.stop();
    rmSync(configDir, { recursive: true, force: true });
  }
}
