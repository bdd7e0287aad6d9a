// tier: process
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYRING_PACKAGE } from '../../src/cli/secret-store/keyring.js';

const repo = resolve(import.meta.dirname, '../..');
const { version } = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string };
const work = mkdtempSync(join(tmpdir(), 'svc-pack-'));
// Quiet npm that uses its cache first; the package's one dependency is optional (the OS keyring's binding).
const npmEnv = { npm_config_fund: 'false', npm_config_audit: 'false', npm_config_update_notifier: 'false', npm_config_prefer_offline: 'true' };
let tarball: string;

beforeAll(async () => {
  // --ignore-scripts: prepack would rebuild dist/ under the feet of the tests
  // running beside this one; the suite runs after `npm run build` anyway.
  const { stdout } = await execa('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: repo, env: npmEnv });
  tarball = join(work, (JSON.parse(stdout) as { filename: string }[])[0]!.filename);
}, 60_000);
afterAll(async () => {
  rmSync(work, { recursive: true, force: true });
  // npx keeps what it installed in the npm cache; drop the copy of this run's tarball.
  const { stdout: cache } = await execa('npm', ['config', 'get', 'cache'], { env: npmEnv });
  const npxDir = join(cache.trim(), '_npx');
  for (const entry of existsSync(npxDir) ? readdirSync(npxDir) : []) {
    const manifest = join(npxDir, entry, 'package.json');
    if (existsSync(manifest) && readFileSync(manifest, 'utf8').includes(basename(work))) {
      rmSync(join(npxDir, entry), { recursive: true, force: true });
    }
  }
});

describe('the npm tarball', () => {
  it('holds the bundle, the bin shim, the man page, the contract documents, licence and changelog, and no sources or tests', async () => {
    const { stdout } = await execa('tar', ['tzf', tarball]);
    const files = stdout.split('\n').map((f) => f.replace(/^package\//, ''));
    expect(files).toEqual(expect.arrayContaining(['package.json', 'bin/svc.js', 'bin/package.json', 'dist/main.js', 'man/svc.1', 'docs/contract.md', 'docs/openapi.yaml', 'docs/new-key.schema.json', 'docs/key-change.schema.json', 'docs/cli-error.schema.json', 'LICENSE', 'CHANGELOG.md']));
    expect(files.filter((f) => /^(src|test|scripts)\/|\.ts$|^\.ci\/|^tsconfig|^vitest/.test(f))).toEqual([]);
  });

  it('declares no runtime dependency, not even the keyring binding: everything svc runs is in the bundle, and a cold npx resolves nothing', async () => {
    const { stdout } = await execa('tar', ['-xzOf', tarball, 'package/package.json']);
    const manifest = JSON.parse(stdout) as Record<string, unknown>;
    for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies', 'bundleDependencies', 'bundledDependencies']) {
      expect(manifest[field], field).toBeUndefined();
    }
    // A native addon cannot be bundled: installed beside svc by whoever wants keyring profiles, at the major svc is tested against.
    expect((manifest.devDependencies as Record<string, string>)['@napi-rs/keyring']).toMatch(new RegExp(`^\\^${KEYRING_PACKAGE.split('@').pop()}\\.`));
    // Each library svc imports is a build-time dependency, pinned by the lockfile.
    const { devDependencies } = manifest as { devDependencies: Record<string, string> };
    for (const lib of ['@inquirer/prompts', 'chalk', 'commander', 'conf', 'undici']) expect(devDependencies).toHaveProperty(lib);
  });

  it('runs with npx in a directory holding nothing but the tarball', async () => {
    const empty = join(work, 'empty');
    mkdirSync(empty);
    copyFileSync(tarball, join(empty, basename(tarball)));
    // A relative path: npx takes an absolute one for a command to run, not a package.
    const result = await execa('npx', ['--yes', `./${basename(tarball)}`, '--version'], { cwd: empty, env: npmEnv, reject: false, timeout: 120_000 });
    expect(result.stdout, result.stderr).toBe(version);
  }, 150_000);

  it('installs globally with its man page, and runs from there', async () => {
    const prefix = join(work, 'prefix');
    const install = await execa('npm', ['install', '--global', '--prefix', prefix, tarball], { env: npmEnv, reject: false, timeout: 120_000 });
    expect(install.exitCode, install.stderr).toBe(0);
    const man = join(prefix, 'share/man/man1/svc.1');
    expect(existsSync(man)).toBe(true);
    expect(readFileSync(man, 'utf8')).toBe(readFileSync(join(repo, 'man/svc.1'), 'utf8'));
    const bin = join(prefix, 'bin/svc');
    expect((await execa(bin, ['--version'])).stdout).toBe(version);
    // The lazily loaded chunks made it into the package too.
    expect((await execa(bin, ['completion', 'bash'])).stdout).toContain('complete -F _svc svc');
    // The keyring binding did not come with it; installed beside it as the README and svc's message say, the bundle's require finds it.
    const installed = join(prefix, 'lib/node_modules/svc-cli/dist/main.js');
    const resolve = () => execa('node', ['-e', `console.log(require('node:module').createRequire(${JSON.stringify(installed)}).resolve('@napi-rs/keyring'))`], { reject: false });
    expect((await resolve()).stderr).toContain("Cannot find module '@napi-rs/keyring'");
    // The command svc's own message gives for a keyring profile, run as printed: svc is in no registry, so it names no package like svc.
    const configDir = join(work, 'config');
    mkdirSync(configDir, { mode: 0o700 });
    writeFileSync(join(configDir, 'config.json'), JSON.stringify({ profiles: { default: { keyring: { service: 'svc', account: 'default@x', hint: 'sk_abcd…wxyz' } } } }), { mode: 0o600 });
    const refused = await execa(bin, ['keys', 'list'], { env: { SVC_CONFIG_DIR: configDir }, reject: false });
    expect(refused.exitCode).toBe(3);
    const advice = /`(npm install [^`]+)`/.exec(refused.stderr)?.[1];
    expect(advice, refused.stderr).toBe(`npm install -g --prefix ${prefix} ${KEYRING_PACKAGE}`);
    const [npm, ...args] = advice!.split(' ');
    const beside = await execa(npm!, args, { env: npmEnv, reject: false, timeout: 120_000 });
    expect(beside.exitCode, beside.stderr).toBe(0);
    const resolved = await resolve();
    expect(resolved.exitCode, resolved.stderr).toBe(0);
  }, 250_000);
});

describe('start-up', () => {
  const bundle = join(repo, 'dist/main.js');
  const code = () => readFileSync(bundle, 'utf8');

  it('is one file, dist/main.js, beside the package.json that marks it CommonJS and the argv grammar the code cache reads', () => {
    expect(readdirSync(join(repo, 'dist')).sort()).toEqual(['argv-grammar.json', 'main.js', 'package.json']);
  });

  it("leaves out conf's schema validator and migration code, and inquirer's editor prompt, which svc never uses", () => {
    // ajv's draft 2020-12 meta-schema id, semver's spec version constant, an iconv-lite code page name.
    for (const marker of ['json-schema.org/draft/2020-12/schema', 'SEMVER_SPEC_VERSION', 'shiftjis']) {
      expect(code().includes(marker), marker).toBe(false);
    }
  });

  it("starts no more of Node's ES module loader than an empty CommonJS script", async () => {
    const config = mkdtempSync(join(work, 'config-'));
    const baseline = join(work, 'baseline.cjs');
    writeFileSync(baseline, '');
    const report = join(work, 'report-esm.cjs');
    writeFileSync(report, "process.on('exit', () => require('node:fs').writeSync(2, `\\n${JSON.stringify(process.moduleLoadList.filter((m) => m.includes('/esm/')))}`));\n");
    /** The ES module loader's parts that Node had loaded when `script` exited. */
    const esmLoaded = async (script: string, ...args: string[]) => {
      const { stderr } = await execa('node', ['--require', report, script, ...args], { env: { SVC_CONFIG_DIR: config }, reject: false });
      return JSON.parse(stderr.split('\n').at(-1)!) as string[];
    };
    const baselineParts = await esmLoaded(baseline);
    // `svc status` reads the profile and reports the missing key.
    const loaded = await esmLoaded(join(repo, 'bin/svc.js'), 'status');
    expect(loaded.length).toBeGreaterThan(0);
    expect(loaded.filter((part) => !baselineParts.includes(part))).toEqual([]);
  });

  it('gives commander a child_process that throws if ever used, since svc has no executable subcommands', async () => {
    expect(code()).toContain('too many arguments');
    expect(code()).toContain('leaves out child_process for commander');
    // The real ones are --to-command's (src/cli/delivery/to-command.ts), svc run's (src/cli/child/command.ts), its reaper's
    // (src/cli/child/reaper.ts) and svc scan's git (src/cli/sources/git.ts), each imported when a process is to be started.
    expect(code().match(/\("(node:)?child_process"\)/g)).toHaveLength(4);
    const report = join(work, 'report-child-process.cjs');
    writeFileSync(report, "process.on('exit', () => require('node:fs').writeSync(2, `\\n${JSON.stringify(process.moduleLoadList.filter((m) => m.includes('child_process')))}`));\n");
    const { stderr } = await execa('node', ['--require', report, join(repo, 'bin/svc.js'), 'status'], { env: { SVC_CONFIG_DIR: mkdtempSync(join(work, 'config-')) }, reject: false });
    expect(JSON.parse(stderr.split('\n').at(-1)!)).toEqual([]);
  });

  /** V8's own count of each function's calls while svc runs `args`: code parsed but never run counts 0. */
  async function callCounts(args: string[], env: Record<string, string> = {}): Promise<{ countAt: (offset: number) => number }> {
    const coverage = mkdtempSync(join(work, 'v8-coverage-'));
    const config = mkdtempSync(join(work, 'config-'));
    // Colour is the case's to choose: none inherited, since an empty FORCE_COLOR forces it too.
    const { FORCE_COLOR: _force, NO_COLOR: _none, ...inherited } = process.env;
    await execa('node', [join(repo, 'bin/svc.js'), ...args], {
      // Without svc's code cache: V8 leaves no call counts on code it took from the cache (a function svc ran counted 0).
      env: { ...inherited, NODE_V8_COVERAGE: coverage, NODE_DISABLE_COMPILE_CACHE: '1', SVC_CONFIG_DIR: config, ...env },
      extendEnv: false,
      reject: false,
    });
    type Range = { startOffset: number; endOffset: number; count: number };
    type Script = { url: string; functions: { ranges: Range[] }[] };
    const scripts = readdirSync(coverage).flatMap((f) => (JSON.parse(readFileSync(join(coverage, f), 'utf8')) as { result: Script[] }).result);
    const main = scripts.find((s) => s.url.endsWith('/dist/main.js'));
    expect(main).toBeDefined();
    const ranges = main!.functions.flatMap((f) => f.ranges);
    // The innermost range around an offset is the block or function it runs in.
    const countAt = (offset: number) =>
      ranges.filter((r) => r.startOffset <= offset && offset < r.endOffset).sort((a, b) => a.endOffset - a.startOffset - (b.endOffset - b.startOffset))[0]!.count;
    return { countAt };
  }

  /** Every offset of `marker` in the bundle. */
  function offsetsOf(marker: string): number[] {
    const text = code();
    const found: number[] = [];
    for (let at = text.indexOf(marker); at >= 0; at = text.indexOf(marker, at + 1)) found.push(at);
    expect(found.length, marker).toBeGreaterThan(0);
    return found;
  }

  it("makes no import() but the keyring binding's, which it requires where it can (vm.Script on Node 20 has no loader for import())", () => {
    expect(code().match(/\bimport\(/g)).toEqual(['import(']);
    expect(code()).toContain('import("@napi-rs/keyring")');
  });

  it('leaves out the man page renderer, which is build-time code (scripts/gen-man.mjs)', () => {
    // Its section headings and the comment atop the page it writes.
    for (const marker of ['.SH ENVIRONMENT', '.SH EXIT STATUS', 'scripts/gen-man.mjs']) {
      expect(code().includes(marker), marker).toBe(false);
    }
  });

  it('runs neither the completion generators, the server, the prompts, the keyring nor any exit hook for a command that reads the profile', async () => {
    // `svc status` with an empty profile reads the config store and stops at "no key".
    const { countAt } = await callCounts(['status']);
    // The bash completion's `complete` line, the server's listen error,
    // inquirer's key help, and the signal lists of exit-hook libraries.
    // The keyring's loader and the session bus's handshake: only a profile kept in the keyring runs them.
    for (const marker of ['complete -F ', 'EADDRINUSE', 'navigate', 'SIGSTKFLT', 'Keyring support is not installed', 'AUTH EXTERNAL']) {
      for (const at of offsetsOf(marker)) expect(countAt(at), marker).toBe(0);
    }
    // And the check sees code that does run: the report of the missing key.
    for (const at of offsetsOf('Not logged in: no API key for profile')) expect(countAt(at)).toBeGreaterThan(0);
  });

  it('runs chalk only for a stream that gets colour, and cli-table3 only for a terminal', async () => {
    // A style only chalk's ansi-styles names, and cli-table3's layout manager.
    const chalk = 'bgBlackBright';
    const table = 'layoutTable';
    const piped = await callCounts(['status']);
    for (const marker of [chalk, table]) for (const at of offsetsOf(marker)) expect(piped.countAt(at), marker).toBe(0);
    // FORCE_COLOR colours a pipe: chalk runs, and still no table is drawn there.
    const coloured = await callCounts(['status'], { FORCE_COLOR: '1' });
    expect(offsetsOf(chalk).some((at) => coloured.countAt(at) > 0)).toBe(true);
    for (const at of offsetsOf(table)) expect(coloured.countAt(at), table).toBe(0);
  });
});
