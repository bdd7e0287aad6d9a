// tier: process
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { cleanEnv, svc, SVC_BIN, tempConfigDir } from '../helpers/cli.js';

// docs/contract.md §C1: the built svc finds a project's `.svc-profile` from its own working
// directory, and stops at its home directory.

const tree = mkdtempSync(join(tmpdir(), 'svc-project-e2e-'));
const config = tempConfigDir();
afterAll(() => {
  rmSync(tree, { recursive: true, force: true });
  config.remove();
});
const make = (...parts: string[]) => {
  const path = join(tree, ...parts);
  mkdirSync(path, { recursive: true });
  return path;
};

describe('.svc-profile in a real process', () => {
  it('is found from the working directory up, and names the profile svc uses', async () => {
    const repo = make('home', 'src', 'repo');
    writeFileSync(join(repo, '.svc-profile'), 'default\n');
    const result = await svc(['status', '--json'], { SVC_CONFIG_DIR: config.dir, HOME: join(tree, 'home') }, { cwd: make('home', 'src', 'repo', 'lib', 'deep') });
    expect(JSON.parse(result.stdout)).toMatchObject({ profile: 'default', profileSource: 'project', profileFile: join(repo, '.svc-profile') });
  });

  it('is not looked for above the home directory', async () => {
    writeFileSync(join(make(), '.svc-profile'), 'above-home\n');
    const result = await svc(['keys', 'list'], { SVC_CONFIG_DIR: config.dir, HOME: join(tree, 'home') }, { cwd: make('home', 'elsewhere') });
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain("Not logged in: no API key for profile 'default'");
  });

  it('a working directory that was removed is no project, and no crash', async () => {
    const gone = make('home', 'gone');
    // A shell in the directory removes it, then becomes svc there.
    const result = await execa('sh', ['-c', 'rmdir "$PWD" && exec node "$0" status', SVC_BIN], {
      cwd: gone,
      env: cleanEnv({ SVC_CONFIG_DIR: config.dir, HOME: join(tree, 'home') }),
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
    });
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toContain('Profile:    default');
    expect(result.stderr).not.toContain('Unexpected error');
  });

  it('a FIFO named .svc-profile is refused at once, not waited on', async () => {
    const repo = make('home', 'fifo');
    await execa('mkfifo', [join(repo, '.svc-profile')]);
    const result = await svc(['status'], { SVC_CONFIG_DIR: config.dir, HOME: join(tree, 'home') }, { cwd: repo });
    expect(result.timedOut).toBe(false);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain(`${join(repo, '.svc-profile')} is a FIFO (named pipe), not a regular file; it was ignored`);
  });
});
