// tier: process
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, useTrees } from '../../helpers/scan-fixtures.js';
import { startLocalServer, svc, tempConfigDir, type LocalServer } from '../../helpers/in-process.js';

// docs/contract.md §C11: what only git and the file system's own tools make: a repository's history and index, a FIFO.

interface ScanDocument {
  keys: { state: string; places: { source: string; path?: string; line: number; commit?: string | null }[] }[];
  scanned: { read: number; skipped: { special: number } };
}

const fake = () => `sk_${'Fake'.repeat(16)}`;

describe('svc scan, with git and FIFOs', () => {
  let server: LocalServer;
  const config = tempConfigDir();
  const env = () => ({ SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey!, SVC_CONFIG_DIR: config.dir });
  const scan = (args: string[], options: Parameters<typeof svc>[2] = {}, extra: Record<string, string> = {}) => svc(['scan', ...args], { ...env(), ...extra }, options);
  const json = (out: string) => JSON.parse(out) as ScanDocument;
  const keys: Record<string, { id: string; secret: string }> = {};
  const create = async (name: string) => {
    keys[name] = await createKey(env(), name);
  };
  const tree = useTrees();

  beforeAll(async () => {
    server = await startLocalServer({ plan: 'pro' });
    await create('live');
    await create('gone');
    expect((await svc(['keys', 'revoke', keys.gone!.id, '--yes'], env())).exitCode).toBe(0);
  });
  afterAll(async () => {
    await server.stop();
    config.remove();
  });

    const git = (dir: string, ...args: string[]) =>
      execFileSync('git', ['-C', dir, '-c', 'user.email=t@example.com', '-c', 'user.name=t', '-c', 'commit.gpgsign=false', ...args], { encoding: 'utf8' });

    it('--git finds a key in a deleted file of the history, at the commit that brought it in', async () => {
      const dir = tree({ 'README.md': 'hello\n' });
      git(dir, 'init', '-q', '-b', 'main');
      git(dir, 'add', '.');
      git(dir, 'commit', '-qm', 'first');
      writeFileSync(join(dir, 'secret.env'), `X=1\nKEY=${keys.live!.secret}\n`);
      git(dir, 'add', '.');
      git(dir, 'commit', '-qm', 'oops');
      const brought = git(dir, 'rev-parse', 'HEAD').trim();
      git(dir, 'rm', '-q', 'secret.env');
      git(dir, 'commit', '-qm', 'remove it');
      // The same blob on a branch is read once, and named at each commit that brought it in.
      git(dir, 'checkout', '-qb', 'other', 'HEAD~2');
      writeFileSync(join(dir, 'copy.env'), `X=1\nKEY=${keys.live!.secret}\n`);
      git(dir, 'add', '.');
      git(dir, 'commit', '-qm', 'copy');
      const copied = git(dir, 'rev-parse', 'HEAD').trim();
      git(dir, 'checkout', '-q', 'main');

      expect(json((await scan([dir, '--json', '--no-verify'])).stdout).keys).toHaveLength(0);
      const result = await scan(['--git', dir, '--json']);
      expect(result.exitCode, result.stderr).toBe(1);
      const doc = json(result.stdout);
      expect(doc.keys).toHaveLength(1);
      expect(doc.keys[0]!.places.map((p) => [p.commit, p.path, p.line]).sort()).toEqual(
        [
          [brought, 'secret.env', 2],
          [copied, 'copy.env', 2],
        ].sort(),
      );
      expect(doc.scanned.read).toBe(2);
    });

    it('--staged reports only the lines the index adds, with their line numbers', async () => {
      const dir = tree({ 'app.cfg': `old=${keys.gone!.secret}\n` });
      git(dir, 'init', '-q', '-b', 'main');
      git(dir, 'add', '.');
      git(dir, 'commit', '-qm', 'first');
      writeFileSync(join(dir, 'app.cfg'), `old=${keys.gone!.secret}\nx=1\nnew=${keys.live!.secret}\n`);
      writeFileSync(join(dir, 'tab\tname.txt'), `${fake()}\n`);
      git(dir, 'add', '.');
      const result = await scan(['--staged', '--no-verify', '--json'], { cwd: dir });
      expect(result.exitCode, result.stderr).toBe(8);
      const places = json(result.stdout).keys.flatMap((k) => k.places.map((p) => [p.source, p.path, p.line]));
      expect(places.sort()).toEqual(
        [
          ['index', 'app.cfg', 3],
          ['index', 'tab\tname.txt', 1],
        ].sort(),
      );
    });

    it('--git fails (exit 6) where a blob a ref reaches cannot be read, never reports no key', async () => {
    const dir = tree({ 'secret.env': `KEY=${keys.live!.secret}\n` });
    git(dir, 'init', '-q', '-b', 'main');
    git(dir, 'add', '.');
    git(dir, 'commit', '-qm', 'one');
    const blob = git(dir, 'rev-parse', 'HEAD:secret.env').trim();
    const object = join(dir, '.git/objects', blob.slice(0, 2), blob.slice(2));
    rmSync(object, { force: true });
    writeFileSync(object, 'garbage');
    const result = await scan(['--git', dir, '--no-verify']);
    expect(result.exitCode, result.stderr).toBe(6);
    expect(result.stderr).not.toContain('No key found');
  });

  it('--git on a shallow clone says the history before it is not scanned', async () => {
    const origin = tree({ 'a.txt': `${keys.live!.secret}\n` });
    git(origin, 'init', '-q', '-b', 'main');
    git(origin, 'add', '.');
    git(origin, 'commit', '-qm', 'one');
    writeFileSync(join(origin, 'a.txt'), 'gone\n');
    git(origin, 'commit', '-qam', 'two');
    const clone = join(tree({}), 'clone');
    execFileSync('git', ['clone', '-q', '--depth', '1', `file://${origin}`, clone]);
    const result = await scan(['--git', clone, '--no-verify']);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain('This clone is shallow');
  });

  it('--git outside a repository is a usage error', async () => {
      const result = await scan(['--git', tree({ 'a.txt': 'x' })]);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain('is not a git repository');
    });

  it('never opens a FIFO in a tree, and counts it', async () => {
    const dir = tree({ 'a.txt': `${keys.live!.secret}\n` });
    execFileSync('mkfifo', [join(dir, 'pipe')]);
    const doc = json((await scan([dir, '--json', '--no-verify'])).stdout);
    expect(doc.scanned.skipped.special).toBe(1);
    expect(doc.keys).toHaveLength(1);
  });
});
