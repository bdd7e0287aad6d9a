// tier: in-process
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConfig } from '../../src/cli/config/store.js';
import { startLocalServer, svc, tempConfigDir, type LocalServer } from '../helpers/in-process.js';

// docs/contract.md §C1: a project's `.svc-profile` chooses the profile, after --profile and
// SVC_PROFILE and before the saved default; it chooses a name and nothing else. Each command
// runs in a real directory tree (the harness's cwd).

let home: LocalServer;
let office: LocalServer;
const config = tempConfigDir();
let tree: string;
let repo: string;
let deep: string;
let elsewhere: string;

const env = (extra: Record<string, string | undefined> = {}) => ({ SVC_CONFIG_DIR: config.dir, ...extra });
const inRepo = (args: string[], extra: Record<string, string | undefined> = {}, where = deep) => svc(args, env(extra), { cwd: where });
const status = async (args: string[] = [], extra: Record<string, string | undefined> = {}, where = deep) => {
  const result = await inRepo(['status', '--json', ...args], extra, where);
  return { ...result, doc: JSON.parse(result.stdout) };
};
const project = (content: string) => writeFileSync(join(repo, '.svc-profile'), content, { mode: 0o644 });

beforeAll(async () => {
  [home, office] = await Promise.all([startLocalServer(), startLocalServer()]);
  for (const [profile, server] of [['default', home], ['work', office]] as const) {
    const login = await svc(['login', '--with-key', '--profile', profile, '--base-url', server.url], env(), { input: server.apiKey! });
    expect(login.exitCode, login.stderr).toBe(0);
  }
  tree = mkdtempSync(join(tmpdir(), 'svc-project-cli-'));
  repo = join(tree, 'repo');
  deep = join(repo, 'packages', 'api');
  elsewhere = join(tree, 'elsewhere');
  mkdirSync(deep, { recursive: true });
  mkdirSync(elsewhere);
  project('work\n');
});
afterAll(async () => {
  await Promise.all([home.stop(), office.stop()]);
  config.remove();
  rmSync(tree, { recursive: true, force: true });
});

describe('a profile bound to a project', () => {
  it('applies below the file, with the key and the server that profile was saved with', async () => {
    const { exitCode, doc } = await status();
    expect(exitCode).toBe(0);
    expect(doc).toMatchObject({ profile: 'work', profileSource: 'project', profileFile: join(repo, '.svc-profile'), baseUrl: office.url, key: { valid: true } });
    const outside = await status([], {}, elsewhere);
    expect(outside.doc).toMatchObject({ profile: 'default', profileSource: 'default', profileFile: null, baseUrl: home.url });
  });

  it('status and profile list say which profile applied and why', async () => {
    const text = await inRepo(['status']);
    expect(text.stdout.split('\n')[0]).toBe(`Profile:    work (from ${join(repo, '.svc-profile')})`);
    const list = await svc(['profile', 'list'], env(), { cwd: deep, tty: true, columns: 120 });
    expect(list.stdout).toMatch(/^\* work /m);
    expect(list.stderr).toContain(`* the profile svc uses here (${join(repo, '.svc-profile')}); saved in`);
    const json = JSON.parse((await inRepo(['profile', 'list', '--json'])).stdout);
    expect(json).toMatchObject({ active: 'work', activeFrom: 'project', activeFile: join(repo, '.svc-profile'), default: 'default' });
  });

  it('--profile and SVC_PROFILE win over it; it wins over the saved default', async () => {
    expect((await status(['--profile', 'default'])).doc).toMatchObject({ profile: 'default', profileSource: 'flag', profileFile: null });
    expect((await status([], { SVC_PROFILE: 'default' })).doc).toMatchObject({ profile: 'default', profileSource: 'env' });
    const use = await inRepo(['profile', 'use', 'default']);
    expect(use.exitCode).toBe(0);
    expect(use.stderr).toContain(`Here ${join(repo, '.svc-profile')} names 'work', and wins over the default.`);
    try {
      await svc(['profile', 'use', 'work'], env(), { cwd: elsewhere });
      expect((await status()).doc).toMatchObject({ profile: 'work', profileSource: 'project' });
      expect((await status([], {}, elsewhere)).doc).toMatchObject({ profile: 'work', profileSource: 'config' });
      expect((await inRepo(['status'], {}, elsewhere)).stdout.split('\n')[0]).toBe('Profile:    work (the default profile, chosen by `svc profile use`)');
    } finally {
      await svc(['profile', 'use', 'default'], env(), { cwd: elsewhere });
    }
  });

  it('never sends the profile\'s key to another server: the file names a profile, not an address', async () => {
    const elsewhereUrl = await inRepo(['keys', 'list'], { SVC_BASE_URL: home.url });
    expect(elsewhereUrl.exitCode).toBe(3);
    expect(elsewhereUrl.stderr).toContain(`The key of profile 'work' belongs to ${office.url}, but SVC_BASE_URL points at ${home.url}; the key was not sent.`);
    try {
      project(`work\nbase-url=${home.url}\n`);
      const refused = await status();
      expect(refused.doc).toMatchObject({ profile: 'default', profileSource: 'default', baseUrl: home.url });
      expect(refused.stderr).toContain('holds more than one line');
    } finally {
      project('work\n');
    }
  });

  it('a name that is no profile is refused without being shown, and the default applies (issue 37)', async () => {
    try {
      project('d7f1c1e0-5b8e-4c1a-9f0e-2d3c4b5a6978');
      const result = await status();
      expect(result.doc).toMatchObject({ profile: 'default', profileSource: 'default', profileFile: null });
      expect(result.stderr).toContain(`${join(repo, '.svc-profile')} names no profile you have (its content is not shown; the profiles are: 'default', 'work')`);
      expect(result.stderr + result.stdout).not.toContain('d7f1c1e0');
    } finally {
      project('work\n');
    }
  });

  it('a file svc will not take stops a command that sends the key, instead of acting with the default profile\'s', async () => {
    const path = join(repo, '.svc-profile');
    try {
      project('wrok\n');
      for (const args of [['keys', 'list'], ['keys', 'prune', '--disabled', '--yes'], ['keys', 'revoke', 'key_nosuch', '--yes']]) {
        const result = await inRepo(args);
        expect(result.exitCode, args.join(' ')).toBe(3);
        expect(result.stderr.split('\n')).toEqual([
          `error: ${path} names no profile you have (its content is not shown; the profiles are: 'default', 'work'). Did you mean 'work'?`,
          'It chooses the profile here, so svc will not use another one: fix the file, or name the profile with --profile or SVC_PROFILE.',
        ]);
        expect(result.stdout).toBe('');
      }
      // Nor is another profile changed in its place: login and logout stop, the config as it was.
      const store = openConfig({ SVC_CONFIG_DIR: config.dir }, () => {});
      const before = JSON.stringify([store.getProfile('default'), store.getProfile('work')]);
      const logout = await inRepo(['logout']);
      const login = await svc(['login', '--with-key'], env({ SVC_BASE_URL: office.url }), { cwd: deep, input: office.apiKey! });
      for (const result of [logout, login]) {
        expect(result.exitCode).toBe(3);
        expect(result.stderr).toContain('It chooses the profile here, so svc will not use another one');
      }
      expect(JSON.stringify([store.getProfile('default'), store.getProfile('work')])).toBe(before);
      // Named outright, or with the key and the server from outside any profile, the file does not matter.
      expect((await inRepo(['keys', 'list', '--profile', 'default'])).exitCode).toBe(0);
      const outside = await inRepo(['keys', 'list'], { SVC_API_KEY: office.apiKey!, SVC_BASE_URL: office.url });
      expect(outside.exitCode, outside.stderr).toBe(0);
      expect(outside.stderr).toContain('It was ignored, and the default profile applies.');
    } finally {
      project('work\n');
    }
  });

  it('a link to a file outside the project is not read: its first line appears nowhere (issue 37)', async () => {
    const token = join(tree, 'token');
    writeFileSync(token, 'd7f1c1e0secretvalue\n', { mode: 0o600 });
    const path = join(repo, '.svc-profile');
    rmSync(path);
    symlinkSync(token, path);
    try {
      const result = await status();
      expect(result.doc).toMatchObject({ profile: 'default', profileSource: 'default' });
      expect(result.stderr).toContain(`${path} is a symbolic link to a file outside its directory`);
      const keys = await inRepo(['keys', 'list']);
      expect(keys.stderr + keys.stdout + result.stdout + result.stderr).not.toContain('d7f1c1e0');
    } finally {
      rmSync(path);
      project('work\n');
    }
  });

  it('a file that holds a key is refused with a warning, the key never shown, and the default applies', async () => {
    try {
      project(`${office.apiKey}\n`);
      const result = await status();
      expect(result.doc).toMatchObject({ profile: 'default', profileSource: 'default' });
      expect(result.stderr).toContain('looks like it holds an API key');
      expect(result.stderr + result.stdout).not.toContain(office.apiKey!.slice(3, 20));
    } finally {
      project('work\n');
    }
  });

  it('says so on every command that sends or changes the key, unless --quiet; a 401 names the file (issue 37)', async () => {
    const file = join(repo, '.svc-profile');
    const announced = `Using profile 'work' from ${file}.`;
    for (const args of [['keys', 'list'], ['keys', 'ping'], ['api', '/user/api-keys']]) {
      const result = await inRepo(args);
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stderr.split('\n').filter((line) => line === announced), args.join(' ')).toHaveLength(1);
      expect((await inRepo([...args, '--quiet'])).stderr).not.toContain('Using profile');
    }
    const login = await svc(['login', '--with-key'], env(), { cwd: deep, input: office.apiKey! });
    expect(login.exitCode, login.stderr).toBe(0);
    expect(login.stderr).toContain(announced);
    expect((await inRepo(['keys', 'list'], {}, elsewhere)).stderr).not.toContain('Using profile');
    // status says it in its block instead.
    expect((await inRepo(['status'])).stderr).not.toContain('Using profile');

    await openConfig({ SVC_CONFIG_DIR: config.dir }, () => {}).update('stale', () => ({ apiKey: `sk_${'Z'.repeat(64)}`, baseUrl: office.url }));
    try {
      project('stale\n');
      const result = await inRepo(['keys', 'list']);
      expect(result.exitCode).toBe(3);
      expect(result.stderr).toContain(`Using profile 'stale' from ${file}.`);
      expect(result.stderr).toContain(`(profile 'stale' was chosen by ${file})`);
      // Nothing listens on port 9 (discard) here.
      await openConfig({ SVC_CONFIG_DIR: config.dir }, () => {}).update('stale', (profile) => ({ ...profile, baseUrl: 'http://127.0.0.1:9' }));
      const unreachable = await inRepo(['keys', 'list', '--max-wait', '0']);
      expect(unreachable.exitCode).toBe(1);
      expect(unreachable.stderr).toContain(`That is the address of profile 'stale', which ${file} chose.`);
    } finally {
      project('work\n');
    }
  });
});
