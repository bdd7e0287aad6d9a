// tier: process
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, SVC_BIN } from '../helpers/cli.js';

// The hook of README.md's "Keep keys out of commits", through the pre-commit framework itself
// (Debian's pre-commit) with this repository's .pre-commit-hooks.yaml, and as a plain git hook.
// Both block a commit that adds a key, whatever its state, and name the file and line.

const KEY = `sk_${'Ab1'.repeat(21)}C`;

describe('the pre-commit hook', () => {
  let work: string;
  let env: Record<string, string | undefined>;
  const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-C', cwd, ...args], { env, encoding: 'utf8' });
  const commit = (cwd: string) => spawnSync('git', ['-C', cwd, 'commit', '-m', 'change'], { env, encoding: 'utf8' });
  const newRepo = (name: string) => {
    const dir = join(work, name);
    mkdirSync(dir);
    git(dir, 'init', '-q', '-b', 'main');
    writeFileSync(join(dir, 'README'), 'hello\n');
    git(dir, 'add', '.');
    git(dir, 'commit', '-qm', 'first');
    return dir;
  };

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'svc-hook-'));
    const bin = join(work, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'svc'), `#!/bin/sh\nexec "${process.execPath}" "${SVC_BIN}" "$@"\n`);
    chmodSync(join(bin, 'svc'), 0o755);
    env = cleanEnv({
      PATH: `${bin}:${process.env.PATH}`,
      PRE_COMMIT_HOME: join(work, 'pre-commit-cache'),
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.com',
      GIT_CONFIG_GLOBAL: join(work, 'gitconfig'),
      GIT_CONFIG_NOSYSTEM: '1',
    });
    writeFileSync(join(work, 'gitconfig'), '[commit]\n\tgpgsign = false\n[init]\n\tdefaultBranch = main\n');
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('through the pre-commit framework, with the hook this repository publishes', () => {
    // The hook's repository, as pre-commit clones it: this repository's .pre-commit-hooks.yaml at a commit.
    const hooks = newRepo('hooks');
    copyFileSync(join(import.meta.dirname, '../../.pre-commit-hooks.yaml'), join(hooks, '.pre-commit-hooks.yaml'));
    git(hooks, 'add', '.');
    git(hooks, 'commit', '-qm', 'hooks');
    const rev = git(hooks, 'rev-parse', 'HEAD').trim();

    const project = newRepo('project');
    writeFileSync(join(project, '.pre-commit-config.yaml'), `repos:\n  - repo: ${hooks}\n    rev: ${rev}\n    hooks:\n      - id: svc-scan\n`);
    git(project, 'add', '.pre-commit-config.yaml');
    git(project, 'commit', '-qm', 'config');
    const installed = spawnSync('pre-commit', ['install'], { cwd: project, env, encoding: 'utf8' });
    expect(installed.status, installed.stderr + installed.stdout).toBe(0);

    writeFileSync(join(project, 'settings.py'), `DEBUG = True\nAPI_KEY = "${KEY}"\n`);
    git(project, 'add', 'settings.py');
    const blocked = commit(project);
    expect(blocked.status, blocked.stdout + blocked.stderr).not.toBe(0);
    const said = blocked.stdout + blocked.stderr;
    expect(said).toContain('settings.py:2');
    expect(said).not.toContain(KEY);
    expect(git(project, 'log', '--oneline')).not.toContain('change');

    // A line marked as a fixture goes through.
    writeFileSync(join(project, 'settings.py'), `DEBUG = True\nAPI_KEY = "${KEY}"  # svc-scan: ignore\n`);
    git(project, 'add', 'settings.py');
    const passed = commit(project);
    expect(passed.status, passed.stdout + passed.stderr).toBe(0);
  });

  it('as a plain git hook, as the README writes it', () => {
    const project = newRepo('plain');
    writeFileSync(join(project, '.git/hooks/pre-commit'), '#!/bin/sh\nexec svc scan --staged --no-verify\n');
    chmodSync(join(project, '.git/hooks/pre-commit'), 0o755);
    writeFileSync(join(project, 'deploy.env'), `TOKEN=${KEY}\n`);
    git(project, 'add', '.');
    const blocked = commit(project);
    // git says only that the hook failed (1); the hook's own exit, 8, says keys were found and not checked.
    expect(blocked.status).toBe(1);
    expect(blocked.stderr).toContain('deploy.env:1');
    expect(git(project, 'log', '--oneline')).not.toContain('change');
    expect(blocked.stdout + blocked.stderr).not.toContain(KEY);
  });
});
