// tier: process
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';

// bin/load-bundle.js: the code cache bin/svc.js uses on Node 20, which has no
// module.enableCompileCache. It is plain vm.Script, so it is tested on every
// Node line; which path svc itself takes is tested last.

const repo = resolve(import.meta.dirname, '../..');
const work = mkdtempSync(join(tmpdir(), 'svc-code-cache-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let fixtures = 0;
/** A package with a CommonJS dist/main.js that reports what it ran. */
function fixture(version = '1.0.0'): { file: string; cacheDir: string } {
  const root = join(work, `pkg-${fixtures++}`);
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(join(root, 'package.json'), JSON.stringify({ version }));
  const file = join(root, 'dist', 'main.js');
  // Something worth caching, and the CommonJS arguments it was given.
  writeFileSync(
    file,
    `const parts = []; for (let i = 0; i < 200; i++) parts.push(function () { return i; });
exports.answer = parts.length + require('node:path').basename(__filename).length + (module.exports === exports ? 1 : 0);
exports.dir = __dirname;`,
  );
  return { file, cacheDir: join(root, 'cache') };
}

/** Loads `file` in a fresh Node process, as bin/svc.js does on Node 20. */
async function load(file: string, cacheDir: string): Promise<{ answer: number; dir: string }> {
  const script = `const { loadWithCodeCache } = require(${JSON.stringify(join(repo, 'bin/load-bundle.js'))});
const { answer, dir } = loadWithCodeCache(${JSON.stringify(file)}, ${JSON.stringify(cacheDir)});
process.stdout.write(JSON.stringify({ answer, dir }));`;
  const { stdout } = await execa('node', ['-e', script]);
  return JSON.parse(stdout) as { answer: number; dir: string };
}

const cacheFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.v8')) : []);

describe('the Node 20 code cache', () => {
  it('runs the file with the CommonJS arguments, writes the cache once, then reads it', async () => {
    const { file, cacheDir } = fixture();
    expect(await load(file, cacheDir)).toEqual({ answer: 200 + 'main.js'.length + 1, dir: join(file, '..') });
    const [cache] = cacheFiles(cacheDir);
    expect(cache).toMatch(/^main-1\.0\.0-\d+-\d+-v\d+\.\d+\.\d+-\w+\.v8$/);
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    const written = statSync(join(cacheDir, cache!));
    expect(written.mode & 0o777).toBe(0o600);
    expect((await load(file, cacheDir)).answer).toBe(208);
    // V8 took the cache: it was not made again.
    expect(statSync(join(cacheDir, cache!)).mtimeMs).toBe(written.mtimeMs);
  });

  it('replaces a cache V8 refuses, and the code still runs', async () => {
    const { file, cacheDir } = fixture();
    await load(file, cacheDir);
    const [cache] = cacheFiles(cacheDir);
    writeFileSync(join(cacheDir, cache!), Buffer.alloc(4096, 7));
    expect((await load(file, cacheDir)).answer).toBe(208);
    expect(readFileSync(join(cacheDir, cache!)).equals(Buffer.alloc(4096, 7))).toBe(false);
  });

  it('keeps the cache of another bundle in use, and removes one written more than 30 days ago', async () => {
    const { file, cacheDir } = fixture('1.0.0');
    await load(file, cacheDir);
    const [older] = cacheFiles(cacheDir);
    const other = fixture('2.0.0');
    await load(other.file, cacheDir);
    expect(cacheFiles(cacheDir)).toHaveLength(2);
    const longAgo = new Date(Date.now() - 31 * 86_400_000);
    utimesSync(join(cacheDir, older!), longAgo, longAgo);
    // A third bundle's first run writes its cache and clears the stale one.
    await load(fixture('3.0.0').file, cacheDir);
    expect(cacheFiles(cacheDir).sort()).toEqual([expect.stringMatching(/^main-2\.0\.0-/), expect.stringMatching(/^main-3\.0\.0-/)]);
  });

  it('neither reads nor writes a directory others may write to', async () => {
    const { file, cacheDir } = fixture();
    mkdirSync(cacheDir);
    chmodSync(cacheDir, 0o777);
    expect((await load(file, cacheDir)).answer).toBe(208);
    expect(cacheFiles(cacheDir)).toEqual([]);
  });
});

describe('svc and the compile cache', () => {
  const nodeCaches = typeof (process.getBuiltinModule('node:module') as { enableCompileCache?: unknown }).enableCompileCache === 'function';

  /** What `svc keys list --help` leaves in the cache directory, with `env`. */
  async function cacheAfterRun(env: Record<string, string>): Promise<string[]> {
    const home = mkdtempSync(join(work, 'home-'));
    await execa('node', [join(repo, 'bin/svc.js'), 'keys', 'list', '--help'], { env: { HOME: home, XDG_CACHE_HOME: '', ...env } });
    const dir = join(home, '.cache/svc/compile-cache');
    return existsSync(dir) ? readdirSync(dir) : [];
  }

  it(`keeps compiled code in ~/.cache/svc/compile-cache (${nodeCaches ? "Node's own cache" : 'bin/load-bundle.js'} on this Node)`, async () => {
    const entries = await cacheAfterRun({});
    if (nodeCaches) expect(entries).toEqual([expect.stringMatching(new RegExp(`^${process.version}-`))]);
    else expect(entries).toEqual([expect.stringMatching(/^main-.*\.v8$/)]);
  });

  it('keeps nothing with NODE_DISABLE_COMPILE_CACHE=1', async () => {
    expect(await cacheAfterRun({ NODE_DISABLE_COMPILE_CACHE: '1' })).toEqual([]);
  });
});
