// tier: process
/**
 * README.md's "Testing your scripts against failures" example, run as
 * written: its shell block, with bash, curl and jq, and the built svc first
 * on PATH, in an empty directory.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, expect, it } from 'vitest';
import { cleanEnv } from '../helpers/cli.js';
import { readmeExample, svcOnPath } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-readme-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));


it('proves a script survives failures and stops on a lost answer', async () => {
  const { bin, work } = svcOnPath(dir);
  writeFileSync(join(work, 'example.sh'), readmeExample('## Testing your scripts against failures'));

  const result = await execa('bash', ['example.sh'], {
    cwd: work,
    env: cleanEnv({ PATH: `${bin}:${process.env.PATH}`, CI: 'true' }),
    extendEnv: false,
    reject: false,
    timeout: 60_000,
  });
  expect(result.exitCode, result.stderr).toBe(0);
  const lines = result.stdout.trimEnd().split('\n');
  expect(lines.slice(0, 2)).toEqual(['listed through two 502s and a 429', 'stopped after a lost answer; svc revoked the one key it made']);
  // The log, newest first: the list of the check, svc's revoke of the key its look found, the look, the lost create
  // and the clock read for --expires-in before it, the retries through the faults.
  expect(lines.slice(2)).toEqual([
    'GET /api/service/user/api-keys 200 -',
    expect.stringMatching(/^DELETE \/api\/service\/user\/api-keys\/key_[a-z0-9]+ 200 -$/),
    'GET /api/service/user/api-keys 200 -',
    expect.stringMatching(/^POST \/api\/service\/user\/api-keys 503 flt_[0-9a-f]{16}$/),
    'GET /api/service/workspace 200 -',
    'GET /api/service/user/api-keys 200 -',
    expect.stringMatching(/^GET \/api\/service\/user\/api-keys 429 flt_/),
    expect.stringMatching(/^GET \/api\/service\/user\/api-keys 502 flt_/),
    expect.stringMatching(/^GET \/api\/service\/user\/api-keys 502 flt_/),
  ]);
  expect(result.stderr).toMatch(/Request failed \(502\); retrying in/);
  expect(result.stderr).toContain('Rate limited; retrying in');
  expect(result.stderr).toContain("It did take effect: a key named 'nightly' appeared");
  expect(result.stderr).toMatch(/created \S+ {2}revoked now/);
}, 60_000);
