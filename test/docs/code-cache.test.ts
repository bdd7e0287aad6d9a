// tier: process
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { realDeps } from '../../src/cli/terminal/deps.js';
import { buildProgram } from '../../src/cli/app/run.js';
import { svc, useLocalServer } from '../helpers/cli.js';
import { memoryIO } from '../helpers/memory-io.js';
import { canMount, mountTmpfs } from '../helpers/tmpfs.js';

// bin/load-bundle.js: the code cache bin/svc.js loads svc's bundle with, on
// every Node line. It is plain vm.Script: each case runs in a fresh Node.

const repo = resolve(import.meta.dirname, '../..');
const loader = join(repo, 'bin/load-bundle.js');
type Grammar = { valueOptions: Set<string>; groups: Set<string> };
const { argvGrammar, commandKey } = createRequire(import.meta.url)(loader) as {
  argvGrammar: (bundle: string) => Grammar;
  commandKey: (argv: string[], grammar: Grammar) => string | undefined;
};
const work = mkdtempSync(join(tmpdir(), 'svc-code-cache-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let fixtures = 0;
/** A package with a CommonJS dist/main.js that reports what it ran; `run()` compiles 200 functions more. */
function fixture(version = '1.0.0'): { file: string; cacheDir: string } {
  const root = join(work, `pkg-${fixtures++}`);
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(join(root, 'package.json'), JSON.stringify({ version }));
  const file = join(root, 'dist', 'main.js');
  writeFileSync(
    file,
    `const parts = []; for (let i = 0; i < 200; i++) parts.push(function () { return i; });
exports.answer = parts.length + require('node:path').basename(__filename).length + (module.exports === exports ? 1 : 0);
exports.dir = __dirname;
exports.run = () => parts.reduce((sum, part) => sum + part(), 0);`,
  );
  return { file, cacheDir: join(root, 'cache') };
}

/**
 * Loads `file` in a fresh Node process as bin/svc.js does, for `command`;
 * runs it, and keeps its code as svc does after a command that succeeded,
 * with `restore` as the flag restorer (JavaScript source), which tells
 * whether the flags came back.
 */
async function load(
  file: string,
  cacheDir: string,
  { command = 'keys-list' as string | null, restore = '() => true', nodeOptions = '' } = {},
): Promise<{ answer: number; dir: string }> {
  const script = `const { loadBundle } = require(${JSON.stringify(loader)});
const { exports: { answer, dir, run }, keepCompiledCode } = loadBundle(${JSON.stringify(file)}, ${JSON.stringify(cacheDir)}, ${command === null ? 'undefined' : JSON.stringify(command)});
run();
keepCompiledCode(${restore});
process.stdout.write(JSON.stringify({ answer, dir }));`;
  const { stdout } = await execa('node', ['-e', script], { env: { NODE_OPTIONS: nodeOptions } });
  return JSON.parse(stdout) as { answer: number; dir: string };
}

const cacheFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.v8')).sort() : []);
const CACHE_NAME = /^main-(\d+\.\d+\.\d+)-\d+-\d+-\d+-v\d+\.\d+\.\d+-[a-z0-9]+(-[0-9a-f]{8})?(?:\.([\w-]+))?\.v8$/;
/** The caches in `dir` as "VERSION start" and "VERSION COMMAND" (and "-FLAGS" after the version, for node flags), sorted; a name of another form as it is. */
const caches = (dir: string) =>
  cacheFiles(dir)
    .map((name) => {
      const [, version, flags, command] = CACHE_NAME.exec(name) ?? [];
      return version ? `${version}${flags ?? ''} ${command ?? 'start'}` : name;
    })
    .sort();
const modified = (dir: string) => Object.fromEntries(cacheFiles(dir).map((f) => [f, statSync(join(dir, f)).mtimeMs]));

describe('the code cache', () => {
  it('runs the file with the CommonJS arguments, keeps a start cache and one per command, then reads them', async () => {
    const { file, cacheDir } = fixture();
    expect(await load(file, cacheDir)).toEqual({ answer: 200 + 'main.js'.length + 1, dir: join(file, '..') });
    expect(caches(cacheDir)).toEqual(['1.0.0 keys-list', '1.0.0 start']);
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    for (const name of cacheFiles(cacheDir)) expect(statSync(join(cacheDir, name)).mode & 0o777).toBe(0o600);
    // The command's cache holds the code its run compiled, beyond the top level.
    const [startFile, commandFile] = cacheFiles(cacheDir).sort((a, b) => a.length - b.length);
    expect(statSync(join(cacheDir, commandFile!)).size).toBeGreaterThan(statSync(join(cacheDir, startFile!)).size);

    // V8 took both caches: neither was made again.
    const written = modified(cacheDir);
    expect((await load(file, cacheDir)).answer).toBe(208);
    expect(modified(cacheDir)).toEqual(written);
    // Another command starts from the start cache and keeps its own.
    await load(file, cacheDir, { command: 'status' });
    expect(caches(cacheDir)).toEqual(['1.0.0 keys-list', '1.0.0 start', '1.0.0 status']);
    expect(statSync(join(cacheDir, startFile!)).mtimeMs).toBe(written[startFile!]);
  });

  it('replaces caches V8 refuses, and the code still runs', async () => {
    const { file, cacheDir } = fixture();
    await load(file, cacheDir);
    const garbage = Buffer.alloc(4096, 7);
    for (const name of cacheFiles(cacheDir)) writeFileSync(join(cacheDir, name), garbage);
    expect((await load(file, cacheDir)).answer).toBe(208);
    for (const name of cacheFiles(cacheDir)) expect(readFileSync(join(cacheDir, name)).equals(garbage), name).toBe(false);
  });

  it('keeps no cache of its own for a command that has none (a request for help)', async () => {
    const { file, cacheDir } = fixture();
    await load(file, cacheDir, { command: null });
    expect(caches(cacheDir)).toEqual(['1.0.0 start']);
  });

  it('runs the code now in the file, not the code cached, after the file was written again at the same length and mtime', async () => {
    const { file, cacheDir } = fixture();
    // npm gives every file of a package it installs the same mtime (1985-10-26).
    const npmTime = new Date('1985-10-26T08:15:00Z');
    const install = (answer: number) => {
      writeFileSync(file, `exports.answer = ${answer}; exports.dir = __dirname; exports.run = () => {};`);
      utimesSync(file, npmTime, npmTime);
    };
    install(111);
    expect((await load(file, cacheDir)).answer).toBe(111);
    install(222);
    expect((await load(file, cacheDir)).answer).toBe(222);
  });

  it('removes the temporary file of a write cut short once it is an hour old, not one being written', async () => {
    const { file, cacheDir } = fixture();
    await load(file, cacheDir);
    const [start] = cacheFiles(cacheDir).sort((a, b) => a.length - b.length);
    const [cutShort, inProgress] = [join(cacheDir, `${start}.99998`), join(cacheDir, `${start}.99999`)];
    writeFileSync(cutShort, 'part');
    writeFileSync(inProgress, 'part');
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
    utimesSync(cutShort, twoHoursAgo, twoHoursAgo);
    await load(file, cacheDir, { command: 'status' });
    expect([existsSync(cutShort), existsSync(inProgress)]).toEqual([false, true]);
  });

  it('keeps no command cache when the V8 flags a command changed did not come back, since V8 would refuse it on every run', async () => {
    const { file, cacheDir } = fixture();
    await load(file, cacheDir, { restore: '() => false' });
    expect(caches(cacheDir)).toEqual(['1.0.0 start']);
  });

  it('keeps caches of their own for a node given other flags, so that neither replaces the other', async () => {
    const { file, cacheDir } = fixture();
    await load(file, cacheDir);
    await load(file, cacheDir, { nodeOptions: '--max-semi-space-size=16' });
    expect(caches(cacheDir)).toEqual(['1.0.0 keys-list', '1.0.0 start', expect.stringMatching(/^1\.0\.0-[0-9a-f]{8} keys-list$/), expect.stringMatching(/^1\.0\.0-[0-9a-f]{8} start$/)]);
    const written = modified(cacheDir);
    await load(file, cacheDir);
    await load(file, cacheDir, { nodeOptions: '--max-semi-space-size=16' });
    expect(modified(cacheDir)).toEqual(written);
  });

  it('keeps the caches of another bundle while it uses them, however long ago they were written', async () => {
    const { file, cacheDir } = fixture('1.0.0');
    await load(file, cacheDir);
    const longAgo = new Date(Date.now() - 31 * 86_400_000);
    for (const name of cacheFiles(cacheDir)) utimesSync(join(cacheDir, name), longAgo, longAgo);
    await load(file, cacheDir);
    await load(fixture('2.0.0').file, cacheDir);
    expect(caches(cacheDir)).toEqual(['1.0.0 keys-list', '1.0.0 start', '2.0.0 keys-list', '2.0.0 start']);
  });

  it('keeps the caches of another bundle in use, and removes those last used more than 30 days ago', async () => {
    const { file, cacheDir } = fixture('1.0.0');
    await load(file, cacheDir);
    const older = cacheFiles(cacheDir);
    const other = fixture('2.0.0');
    await load(other.file, cacheDir);
    expect(cacheFiles(cacheDir)).toHaveLength(4);
    const longAgo = new Date(Date.now() - 31 * 86_400_000);
    for (const name of older) utimesSync(join(cacheDir, name), longAgo, longAgo);
    // A third bundle's first run writes its caches and clears the stale ones.
    await load(fixture('3.0.0').file, cacheDir);
    expect(caches(cacheDir)).toEqual(['2.0.0 keys-list', '2.0.0 start', '3.0.0 keys-list', '3.0.0 start']);
  });

  it('keeps the 16 command caches written last', async () => {
    const { file, cacheDir } = fixture();
    for (let i = 0; i < 17; i++) {
      await load(file, cacheDir, { command: `c${i}` });
      // Each a second older than the next, whatever the file system's timestamp resolution.
      const [name] = cacheFiles(cacheDir).filter((f) => f.endsWith(`.c${i}.v8`));
      const at = new Date(Date.now() - (100 - i) * 1000);
      utimesSync(join(cacheDir, name!), at, at);
    }
    await load(file, cacheDir, { command: 'c17' });
    const commands = cacheFiles(cacheDir).map((f) => /\.(c\d+)\.v8$/.exec(f)?.[1]).filter(Boolean);
    expect(commands.sort()).toEqual(Array.from({ length: 16 }, (_, i) => `c${i + 2}`).sort());
  });

  it.skipIf(!canMount)('runs all the same on a full disk, and leaves no part of a cache behind (needs root to mount a tmpfs; skipped when not root)', async () => {
    const disk = mountTmpfs('1m');
    try {
      const { file } = fixture();
      const cacheDir = join(disk.dir, 'cache');
      mkdirSync(cacheDir, { mode: 0o700 });
      disk.fill();
      expect((await load(file, cacheDir)).answer).toBe(208);
      expect(readdirSync(cacheDir)).toEqual([]);
    } finally {
      disk.unmount();
    }
  });

  it('neither reads nor writes a directory others may write to', async () => {
    const { file, cacheDir } = fixture();
    mkdirSync(cacheDir);
    chmodSync(cacheDir, 0o777);
    expect((await load(file, cacheDir)).answer).toBe(208);
    expect(cacheFiles(cacheDir)).toEqual([]);
  });
});

describe('which command a cache is for', () => {
  it.each([
    [[], 'svc'],
    [['keys', 'list', '--json'], 'keys-list'],
    [['--profile', 'work', '--timeout', '500', 'keys', 'create', 'ci'], 'keys-create'],
    [['--profile=work', '-q', 'status'], 'status'],
    [['api', '/user/api-keys'], 'api'],
    [['__complete', 'keys', ''], '__complete-keys'],
    [['--', 'keys'], 'svc'],
    [['../../etc', 'keys'], 'svc'],
    [['keys', 'list', '--help'], undefined],
    [['-h', 'keys'], undefined],
    [['help', 'keys', 'list'], undefined],
    [['keys', 'create', 'help'], 'keys-create'],
    [['keys', 'list', '-qh'], undefined],
    [['-V', 'keys', 'list'], undefined],
    [['--version', 'keys', 'list'], undefined],
    [['keys', 'list', '-q'], 'keys-list'],
    [['run', '--name', 'deploy-42', '--', 'make'], 'run'],
    [['run', '--ephemeral', '2h', '--', 'make'], 'run'],
    [['login', 'work'], 'login'],
  ])('svc %j: %s', (argv, key) => {
    expect(commandKey(argv, argvGrammar(join(repo, 'dist/main.js')))).toBe(key);
  });

  // The grammar is written by the build (scripts/argv-grammar.mjs); these check what it wrote.
  const built = () => argvGrammar(join(repo, 'dist/main.js'));

  it("skips the value of each of the program's options that take one, and only those", () => {
    const { program } = buildProgram(memoryIO().io, realDeps);
    const taking = program.options.filter((option) => option.required || option.optional).map((option) => option.long!);
    expect([...built().valueOptions].sort()).toEqual(taking.sort());
  });

  it('takes a second word only after a command that has subcommands, or the completer, whose one argument is the kind of words to list', () => {
    const { program } = buildProgram(memoryIO().io, realDeps);
    const groups = [...program.commands.filter((command) => command.commands.length > 0).map((command) => command.name()), '__complete'];
    expect([...built().groups].sort()).toEqual(groups.sort());
  });
});

describe('svc and the code cache', () => {
  const local = useLocalServer(['--plan', 'pro']);

  it('keeps a cache for each command that succeeded, in ~/.cache/svc/compile-cache, and runs from it the next time', async () => {
    const home = mkdtempSync(join(work, 'home-'));
    const env = { ...local.env, HOME: home, XDG_CACHE_HOME: undefined, NODE_COMPILE_CACHE: undefined };
    const dir = join(home, '.cache/svc/compile-cache');
    // A request changes a V8 flag (src/client/v8-flags.ts): kept all the same, flags restored.
    expect((await svc(['keys', 'list', '--json'], env)).exitCode).toBe(0);
    expect(caches(dir)).toEqual([expect.stringMatching(/ keys-list$/), expect.stringMatching(/ start$/)]);
    const written = modified(dir);
    expect((await svc(['keys', 'list', '--json'], env)).exitCode).toBe(0);
    expect(modified(dir)).toEqual(written);
    // A command that failed keeps nothing of its own.
    expect((await svc(['keys', 'view', 'key_nosuch'], env)).exitCode).not.toBe(0);
    expect(cacheFiles(dir)).toHaveLength(2);
  });

  /** Changes `count` bytes past the first 64 of `path`, the same ones every time. */
  function damage(path: string, count = 200): void {
    const bytes = readFileSync(path);
    let seed = 1;
    for (let i = 0; i < count; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const at = 64 + (seed % (bytes.length - 64));
      bytes[at] = bytes[at]! ^ 0xff;
    }
    writeFileSync(path, bytes);
  }

  /** The home, the environment and the cache directory of a user who has run `svc completion bash` once. */
  async function afterCompletion() {
    const home = mkdtempSync(join(work, 'home-'));
    const env = { HOME: home, XDG_CACHE_HOME: undefined, NODE_COMPILE_CACHE: undefined };
    const first = await svc(['completion', 'bash'], env);
    expect(first.exitCode).toBe(0);
    const dir = join(home, '.cache/svc/compile-cache');
    const command = join(dir, cacheFiles(dir).find((name) => name.endsWith('.completion.v8'))!);
    return { env, expected: first.stdout, command };
  }

  it('runs as before when a cache was damaged on disk, and replaces it (V8 would crash on the code in it)', async () => {
    const { env, expected, command } = await afterCompletion();
    damage(command);
    const damaged = readFileSync(command);
    const run = await svc(['completion', 'bash'], env);
    expect({ exitCode: run.exitCode, stdout: run.stdout }).toEqual({ exitCode: 0, stdout: expected });
    expect(readFileSync(command).equals(damaged)).toBe(false);
    expect((await svc(['completion', 'bash'], env)).stdout).toBe(expected);
  });

  it('neither waits on a FIFO nor reads through a link (to /dev/zero) found where a cache goes', async () => {
    const { env, expected, command } = await afterCompletion();
    rmSync(command);
    execFileSync('mkfifo', [command]);
    // svc() gives up after 30 s: a hang shows as a run that timed out.
    const fifo = await svc(['completion', 'bash'], env);
    expect({ timedOut: fifo.timedOut, exitCode: fifo.exitCode, stdout: fifo.stdout }).toEqual({ timedOut: false, exitCode: 0, stdout: expected });
    rmSync(command);
    symlinkSync('/dev/zero', command);
    const link = await svc(['completion', 'bash'], env);
    expect({ timedOut: link.timedOut, exitCode: link.exitCode, stdout: link.stdout }).toEqual({ timedOut: false, exitCode: 0, stdout: expected });
  }, 90_000);

  it('keeps no cache of its own for a request for help, whose run holds the help code alone', async () => {
    const home = mkdtempSync(join(work, 'home-'));
    expect((await svc(['keys', 'list', '--help'], { HOME: home, XDG_CACHE_HOME: undefined, NODE_COMPILE_CACHE: undefined })).exitCode).toBe(0);
    expect(caches(join(home, '.cache/svc/compile-cache'))).toEqual([expect.stringMatching(/ start$/)]);
  });

  it('keeps nothing with NODE_DISABLE_COMPILE_CACHE=1', async () => {
    const home = mkdtempSync(join(work, 'home-'));
    const run = await svc(['keys', 'list', '--help'], { HOME: home, XDG_CACHE_HOME: undefined, NODE_COMPILE_CACHE: undefined, NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(run.exitCode).toBe(0);
    expect(existsSync(join(home, '.cache/svc/compile-cache'))).toBe(false);
  });
});
