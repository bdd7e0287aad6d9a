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
      // svc run --ephemeral makes a key, starts svc's reaper beside the command (bin/reap.js) and revokes the key: what that adds to a run
      // with the saved key, which makes no request. A yardstick: its three requests are the service's to answer.
      {
        name: '`svc run --ephemeral -- true`, key in SVC_API_KEY',
        args: [SVC_BIN, 'run', '--ephemeral', '--', 'true'],
        env: envKeyEnv,
        floor: { name: '`svc run -- true`', args: [SVC_BIN, 'run', '--', 'true'], env: envKeyEnv },
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
 * `npx --yes ./<package>.tgz --version` as a first-time user runs it: the
 * packed tarball alone in an empty directory, and an empty npm cache each
 * run, so whatever the package declares (optional dependencies included)
 * is resolved from the registry every time. npm's own start-up is part of
 * the figure. Beside svc, in the same rounds and taking turns, the
 * yardstick: a one-file package (package.json and its bin) that prints its
 * version, and the same one-file package declaring svc's keyring binding
 * as an optional dependency, as svc did until issue 38: what that alone
 * costs npx. The ratio
 * is each round's svc over that round's one-file package.
 */
/** The keyring binding svc loads on demand (src/cli/secret-store/keyring.ts), at the range its tests use. */
const KEYRING_RANGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).devDependencies['@napi-rs/keyring'];

export function benchNpxCold({ rounds }) {
  const work = mkdtempSync(join(tmpdir(), 'svc-bench-npx-'));
  try {
    // --ignore-scripts: prepack would rebuild dist/; `npm run bench` has just built it.
    const svcTarball = pack(ROOT, work);
    const manifest = JSON.parse(execFileSync('tar', ['-xzOf', svcTarball, 'package/package.json'], { encoding: 'utf8' }));
    const oneFile = pack(oneFilePackage(work, 'one-file', {}), work);
    // What svc declared for its keyring binding before issue 38 (an optional dependency), to show what that alone costs npx.
    const withOptional = pack(oneFilePackage(work, 'one-file-optional', { '@napi-rs/keyring': KEYRING_RANGE }), work);
    const packages = [
      { name: 'svc', tarball: svcTarball, version: manifest.version, times: [] },
      { name: 'one-file', tarball: oneFile, version: '1.0.0', times: [] },
      { name: 'one-file declaring @napi-rs/keyring optional', tarball: withOptional, version: '1.0.0', times: [] },
    ];
    let run = 0;
    for (let round = 0; round < rounds; round++) {
      // Each round starts with another package, so that none is always first after a pause.
      for (let k = 0; k < packages.length; k++) {
        const measured = packages[(round + k) % packages.length];
        measured.times[round] = npxOnce(measured, join(work, `run-${run++}`));
      }
    }
    const [svc, yardstick] = packages;
    const ratios = svc.times.map((ms, round) => ms / yardstick.times[round]);
    return {
      rounds,
      ratio: median(ratios),
      ratioMin: Math.min(...ratios),
      ratioMax: Math.max(...ratios),
      packages: packages.map((p) => ({ name: p.name, ms: median(p.times), min: Math.min(...p.times), max: Math.max(...p.times), kiB: readFileSync(p.tarball).length / 1024 })),
      dependencies: Object.keys(manifest.dependencies ?? {}),
      optionalDependencies: Object.keys(manifest.optionalDependencies ?? {}),
      peerDependencies: Object.keys(manifest.peerDependencies ?? {}),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function pack(dir, destination) {
  const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', destination], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
  return join(destination, packed[0].filename);
}

/** A package of one file, its bin, which prints its version as `svc --version` does. */
function oneFilePackage(work, name, optionalDependencies) {
  const dir = join(work, `${name}-source`);
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', bin: { [name]: 'cli.js' }, optionalDependencies }));
  writeFileSync(join(dir, 'cli.js'), "#!/usr/bin/env node\nprocess.stdout.write('1.0.0\\n');\n");
  return dir;
}

/** One cold `npx --yes ./<tarball> --version` in `dir`, with a cache of its own; its wall time in ms. */
function npxOnce({ tarball, version }, dir) {
  const cache = `${dir}-cache`;
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
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0 || result.stdout.trim() !== version) {
    throw new Error(`npx cold run of ${basename(tarball)} exited ${result.status} printing ${JSON.stringify(result.stdout)}: ${result.stderr}`);
  }
  rmSync(cache, { recursive: true, force: true });
  return ms;
}

/** Issue 38: a cold npx of svc costs at most this much more than a one-file package's, measured in the same rounds. */
export const NPX_COLD_RATIO = 1.2;

/** benchNpxCold's figures as RESULTS.md shows them: svc, its yardstick from the same rounds, and the ratio against `target`. */
export function npxColdSection(npx, node, target = NPX_COLD_RATIO) {
  const ms = (n) => `${Math.round(n).toLocaleString('en-US')} ms`;
  const declared = [
    ['dependencies', npx.dependencies],
    ['optional dependencies', npx.optionalDependencies],
    ['peer dependencies (optional, not installed by npm)', npx.peerDependencies],
  ].map(([kind, names]) => `${kind}: ${names.length === 0 ? 'none' : names.join(', ')}`);
  return [
    '### npx, cold',
    '',
    `\`npx --yes ./<package>.tgz --version\`, the tarball alone in an empty directory and a new empty npm cache (\`npm_config_cache\`) each run, ${npx.rounds} rounds with ${node}, the packages taking turns within each round; npm's own start-up and its registry look-ups are included. svc is \`npm pack\` of this checkout (${declared.join('; ')}); the yardstick is a one-file package (package.json and a bin that prints its version), also shown declaring @napi-rs/keyring (svc's keyring binding) as an optional dependency, as svc did before. The ratio is each round's svc over that round's one-file package.`,
    '',
    '| package | median | min–max | tarball |',
    '|---|---|---|---|',
    ...npx.packages.map((p) => `| ${p.name} | ${ms(p.ms)} | ${ms(p.min)}–${ms(p.max)} | ${p.kiB.toFixed(0)} KiB |`),
    '',
    '| | median ratio | min–max | target |  |',
    '|---|---|---|---|---|',
    `| svc / one-file package | ${npx.ratio.toFixed(2)} | ${npx.ratioMin.toFixed(2)}–${npx.ratioMax.toFixed(2)} | ≤ ${target} | ${npx.ratio <= target ? 'met' : '**missed**'} |`,
    '',
  ];
}
