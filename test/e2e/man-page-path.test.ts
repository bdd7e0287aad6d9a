// tier: process
/**
 * Where the manual is (issue 38): run through npx, `man svc` finds no page,
 * so the top-level help names the one the package ships, found from the
 * script that runs, through npm's .bin link too.
 */
import { execa } from 'execa';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, svc, SVC_BIN } from '../helpers/cli.js';

const page = join(dirname(dirname(SVC_BIN)), 'man', 'svc.1');
let dir: string | undefined;
afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

describe('the top-level help names the shipped man page', () => {
  it('run as bin/svc.js', async () => {
    const result = await svc(['--help'], {});
    expect(result.exitCode).toBe(0);
    expect(result.stdout.split('\n').slice(-2)).toEqual(['The manual: man svc, or where man finds none (npx):', `  $ man ${page}`]);
  });

  it('run through a link, as npx runs node_modules/.bin/svc', async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-bin-'));
    symlinkSync(SVC_BIN, join(dir, 'svc'));
    const result = await execa('node', [join(dir, 'svc'), '--help'], { env: cleanEnv({}), extendEnv: false, reject: false, stdin: 'ignore' });
    expect(result.stdout.split('\n')).toContain(`  $ man ${page}`);
  });

  it('stays one pastable command however long the path, quoted where it holds a space', async () => {
    // A checkout deep enough that "man <path>" is wider than the 80 columns piped help is laid out for.
    dir = mkdtempSync(join(tmpdir(), 'svc-bin-'));
    const root = join(dir, 'a folder with spaces', 'x'.repeat(60));
    for (const part of ['bin', 'dist', 'man', 'package.json']) cpSync(join(dirname(dirname(SVC_BIN)), part), join(root, part), { recursive: true });
    const result = await execa('node', [join(root, 'bin', 'svc.js'), '--help'], { env: cleanEnv({}), extendEnv: false, reject: false, stdin: 'ignore' });
    expect(result.stdout.split('\n')).toContain(`  $ man '${join(root, 'man', 'svc.1')}'`);
  });

  it('is not in a command\'s help, which stays about that command', async () => {
    expect((await svc(['keys', 'list', '--help'], {})).stdout).not.toContain('The manual');
  });
});
