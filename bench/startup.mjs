// CLI start-up against the floors it stands on. `svc --version` is paired
// with `node -e 0`, the floor of any Node CLI; `svc keys list --json` with
// bench/floor-request.cjs, one request made with the same undici subset and
// V8 flag as svc's transport, the floor of any command that calls the API.
// Each measured run is paired with a run of its floor next to it, the order
// inside a pair alternates (so drift in the machine's speed hits both sides
// alike), and the figure is the median of the per-pair ratios.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { childEnv, median, quantile, ROOT, SVC_BIN, startSvcServer } from './lib.mjs';

const FLOOR_SCRIPT = join(ROOT, 'bench', 'floor-request.cjs');

/** Wall time of one run of `node args`, in ms; a run that fails throws with its stderr. */
export function timed(node, args, env, input) {
  const started = process.hrtime.bigint();
  const result = spawnSync(node, args, { cwd: ROOT, env, input, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) {
    throw new Error(`${node} ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  }
  return ms;
}

/**
 * Start-up of each case against its floor, with the Node binary `node` (the
 * benchmark's own by default). Children run in a minimal environment: PATH,
 * HOME, NO_COLOR and what the case needs, nothing inherited such as
 * NODE_OPTIONS or NODE_EXTRA_CA_CERTS. HOME is the real one, so svc's code
 * cache for the command (~/.cache/svc) is warm after the warm-up runs, as it
 * is from a user's second run of that command on; one row measures the
 * first run, with an empty cache directory each time.
 */
export async function benchStartup({ pairs, node = process.execPath }) {
  /** A case's environment: given, or made anew for each run. */
  const envOf = (c) => (typeof c.env === 'function' ? c.env() : c.env);
  const work = mkdtempSync(join(tmpdir(), 'svc-bench-startup-'));
  const server = await startSvcServer(['--plan', 'pro']);
  try {
    const envDir = join(work, 'env-config');
    const profileDir = join(work, 'profile-config');
    mkdirSync(envDir);
    const emptyModule = join(work, 'empty.mjs');
    writeFileSync(emptyModule, '');

    const baseEnv = childEnv({ SVC_CONFIG_DIR: envDir });
    const envKeyEnv = childEnv({ SVC_CONFIG_DIR: envDir, SVC_API_KEY: server.apiKey, SVC_BASE_URL: server.url });
    // The everyday path after `svc login`: key and address both come from the saved profile.
    const profileEnv = childEnv({ SVC_CONFIG_DIR: profileDir });
    timed(node, [SVC_BIN, 'login', '--with-key', '--base-url', server.url], profileEnv, `${server.apiKey}\n`);

    const nodeFloor = { name: '`node -e 0`', args: ['-e', '0'], env: baseEnv };
    const requestFloor = { name: '`node bench/floor-request.cjs`', args: [FLOOR_SCRIPT], env: envKeyEnv };
    const cases = [
      { name: '`svc --version`', args: [SVC_BIN, '--version'], env: baseEnv, floor: nodeFloor, target: 1.15 },
      { name: '`svc keys list --json`, key in SVC_API_KEY', args: [SVC_BIN, 'keys', 'list', '--json'], env: envKeyEnv, floor: requestFloor, target: 1.1 },
      { name: '`svc keys list --json`, key in the saved profile', args: [SVC_BIN, 'keys', 'list', '--json'], env: profileEnv, floor: requestFloor, target: 1.1 },
      // What the first run of a command costs: compiled from source, its code caches written after it answered.
      {
        name: '`svc keys list --json`, key in SVC_API_KEY, first run (no code cache)',
        args: [SVC_BIN, 'keys', 'list', '--json'],
        env: () => ({ ...envKeyEnv, XDG_CACHE_HOME: mkdtempSync(join(work, 'cache-')) }),
        floor: requestFloor,
        target: null,
      },
      // Yardsticks, not svc: what an ES module entry point costs (svc's bin and bundle are CommonJS to avoid it), and the request floor itself.
      { name: '`node empty.mjs`', args: [emptyModule], env: baseEnv, floor: nodeFloor, target: null },
      { ...requestFloor, floor: nodeFloor, target: null },
    ];

    // Warm the page cache, the compile cache and the server's first-request paths; not measured.
    for (let i = 0; i < 3; i++) {
      for (const c of cases) {
        timed(node, c.floor.args, envOf(c.floor));
        timed(node, c.args, envOf(c));
      }
    }

    const samples = cases.map(() => ({ ratios: [], measured: [], floor: [] }));
    for (let i = 0; i < pairs; i++) {
      cases.forEach((c, j) => {
        let floor;
        let measured;
        if (i % 2 === 0) {
          floor = timed(node, c.floor.args, envOf(c.floor));
          measured = timed(node, c.args, envOf(c));
        } else {
          measured = timed(node, c.args, envOf(c));
          floor = timed(node, c.floor.args, envOf(c.floor));
        }
        samples[j].floor.push(floor);
        samples[j].measured.push(measured);
        samples[j].ratios.push(measured / floor);
      });
    }
    return {
      node: execFileSync(node, ['--version'], { encoding: 'utf8' }).trim(),
      pairs,
      rows: cases.map((c, j) => ({
        name: c.name,
        floor: c.floor.name,
        target: c.target,
        ratio: median(samples[j].ratios),
        ratioP25: quantile(samples[j].ratios, 0.25),
        ratioP75: quantile(samples[j].ratios, 0.75),
        ms: median(samples[j].measured),
        floorMs: median(samples[j].floor),
      })),
    };
  } finally {
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * `npx --yes ./svc-cli-<version>.tgz --version` as a first-time user runs
 * it: the packed tarball alone in an empty directory, and an empty npm cache
 * each run, so whatever the package declares as dependencies is fetched from
 * the registry every time. npm's own start-up is part of the figure.
 */
export function benchNpxCold({ runs }) {
  const work = mkdtempSync(join(tmpdir(), 'svc-bench-npx-'));
  try {
    // --ignore-scripts: prepack would rebuild dist/; `npm run bench` has just built it.
    const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    const tarball = join(work, packed[0].filename);
    const manifest = JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }));
    const times = [];
    for (let i = 0; i < runs; i++) {
      const dir = join(work, `run-${i}`);
      const cache = join(work, `cache-${i}`);
      mkdirSync(dir);
      copyFileSync(tarball, join(dir, basename(tarball)));
      const env = childEnv({
        npm_config_cache: cache,
        npm_config_update_notifier: 'false',
        npm_config_fund: 'false',
        npm_config_audit: 'false',
        // npm and npx from the PATH use the node beside them, as a user's would.
        PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      });
      const started = process.hrtime.bigint();
      const result = spawnSync('npx', ['--yes', `./${basename(tarball)}`, '--version'], { cwd: dir, env, encoding: 'utf8' });
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
      if (result.status !== 0 || result.stdout.trim() !== manifest.version) {
        throw new Error(`npx cold run exited ${result.status} printing ${JSON.stringify(result.stdout)}: ${result.stderr}`);
      }
      rmSync(cache, { recursive: true, force: true });
    }
    return {
      runs,
      ms: median(times),
      min: Math.min(...times),
      max: Math.max(...times),
      dependencies: Object.keys(manifest.dependencies ?? {}),
      tarballKiB: readFileSync(tarball).length / 1024,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
