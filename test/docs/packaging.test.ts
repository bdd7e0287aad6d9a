import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '../..');
const { version } = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string };
const work = mkdtempSync(join(tmpdir(), 'svc-pack-'));
// Quiet npm that uses its cache first; the package declares no dependencies, so npx fetches nothing.
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
    expect(files).toEqual(expect.arrayContaining(['package.json', 'bin/svc.js', 'bin/package.json', 'dist/main.js', 'man/svc.1', 'docs/contract.md', 'docs/openapi.yaml', 'LICENSE', 'CHANGELOG.md']));
    expect(files.filter((f) => /^(src|test|scripts)\/|\.ts$|^\.ci\/|^tsconfig|^vitest/.test(f))).toEqual([]);
  });

  it('declares no runtime dependency: everything svc runs is in the bundle', async () => {
    const { stdout } = await execa('tar', ['-xzOf', tarball, 'package/package.json']);
    const manifest = JSON.parse(stdout) as Record<string, unknown>;
    for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies', 'bundleDependencies', 'bundledDependencies']) {
      expect(manifest[field], field).toBeUndefined();
    }
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
  }, 150_000);
});

describe('start-up', () => {
  /** Every file dist/main.js loads before it runs: its static imports, transitively. */
  function staticallyLoaded(file: string, seen = new Set<string>()): Set<string> {
    seen.add(file);
    const code = readFileSync(file, 'utf8');
    for (const [, a, b] of code.matchAll(/\bfrom\s*"(\.\.?\/[^"]+)"|\bimport\s*"(\.\.?\/[^"]+)"/g)) {
      const next = resolve(dirname(file), (a ?? b)!);
      if (!seen.has(next)) staticallyLoaded(next, seen);
    }
    return seen;
  }

  it('leaves out conf\'s schema validator and migration code, which svc never uses', () => {
    const chunks = readdirSync(join(repo, 'dist/chunks')).map((f) => readFileSync(join(repo, 'dist/chunks', f), 'utf8'));
    // ajv's draft 2020-12 meta-schema id and semver's spec version constant.
    for (const marker of ['json-schema.org/draft/2020-12/schema', 'SEMVER_SPEC_VERSION']) {
      expect(chunks.some((code) => code.includes(marker)), marker).toBe(false);
    }
  });

  it('imports no Node built-in as an ES module, whose facade would run every getter of the built-in', () => {
    const files = [join(repo, 'dist/main.js'), ...readdirSync(join(repo, 'dist/chunks')).map((f) => join(repo, 'dist/chunks', f))];
    const builtin = new RegExp(`(from|import)\\s*"(node:[^"]+|${builtinModules.join('|')})"`);
    for (const file of files) expect(readFileSync(file, 'utf8'), file).not.toMatch(builtin);
  });

  it('gives commander a child_process that throws if ever used, since svc has no executable subcommands', () => {
    const chunks = readdirSync(join(repo, 'dist/chunks')).map((f) => readFileSync(join(repo, 'dist/chunks', f), 'utf8'));
    const commander = chunks.filter((code) => code.includes('too many arguments'));
    expect(commander).toHaveLength(1);
    expect(commander[0]).toContain("leaves out child_process for commander");
    expect(commander[0]).not.toMatch(/\("(node:)?child_process"\)/);
  });

  it('registers no exit hooks on 18 signals when conf is loaded (atomically\'s when-exit is left out)', () => {
    const loaded = [...staticallyLoaded(join(repo, 'dist/main.js'))];
    const store = readdirSync(join(repo, 'dist/chunks')).filter((f) => f.startsWith('store-')).map((f) => join(repo, 'dist/chunks', f));
    expect(store).toHaveLength(1);
    for (const file of [...loaded, ...store, ...[...staticallyLoaded(store[0]!)]]) {
      expect(readFileSync(file, 'utf8'), file).not.toContain('SIGSTKFLT');
    }
  });

  it('does not load the man page and completion generators or the tree walker they share', () => {
    const loaded = [...staticallyLoaded(join(repo, 'dist/main.js'))].map((f) => readFileSync(f, 'utf8'));
    expect(loaded.length).toBeGreaterThan(1);
    for (const marker of ['.SH EXIT STATUS', 'complete -F ', 'Examples?:']) {
      expect(loaded.some((code) => code.includes(marker)), marker).toBe(false);
    }
  });
});
