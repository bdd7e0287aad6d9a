// tier: process
/**
 * README.md's "Running a command with a key" CI example, run as written:
 * its shell block, with the built svc first on PATH, against a reference
 * server, in a directory whose deploy.sh checks the key it was given.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, expect, it } from 'vitest';
import { keyHint } from '../../src/contract/key-format.js';
import { cleanEnv } from '../helpers/cli.js';
import { call, useLocalServer } from '../helpers/in-process.js';
import { readmeExample, svcOnPath } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-readme-run-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const local = useLocalServer({ plan: 'pro' });


it('gives the deploy step a key of its own, masked in its log and revoked when it ends', async () => {
  const { bin, work } = svcOnPath(dir);
  // The deploy: checks that the key works, keeps it for the test, and prints it as a careless script might.
  writeFileSync(
    join(work, 'deploy.sh'),
    [
      '#!/bin/sh',
      'set -eu',
      `"${process.execPath}" -e 'fetch(process.env.SVC_BASE_URL + "/api/service/user/api-keys", { headers: { authorization: "Bearer " + process.env.SVC_API_KEY } }).then((r) => process.exit(r.status === 200 ? 0 : 1))'`,
      'printf %s "$SVC_API_KEY" > key.txt',
      'echo "deploying to $1 with $SVC_API_KEY"',
      '',
    ].join('\n'),
  );
  chmodSync(join(work, 'deploy.sh'), 0o755);
  writeFileSync(join(work, 'example.sh'), readmeExample('### Running a command with a key'));

  const result = await execa('bash', ['-eu', 'example.sh'], {
    cwd: work,
    env: cleanEnv({ ...local.env, PATH: `${bin}:${process.env.PATH}`, CI: 'true', CI_JOB_ID: '42' }),
    extendEnv: false,
    reject: false,
    timeout: 30_000,
  });
  expect(result.exitCode, result.stderr).toBe(0);
  const key = readFileSync(join(work, 'key.txt'), 'utf8');
  expect(result.stdout).toBe(`deploying to production with ${keyHint(key)}`);
  expect(result.stderr).toMatch(/^Made key key_\w+ for the command; it expires at \S+\.\nRevoked key key_\w+\.$/);
  expect((await call(local.server.url, 'GET', '/api/service/user/api-keys', key)).status).toBe(401);
  const listed = await call(local.server.url, 'GET', '/api/service/user/api-keys', local.server.apiKey);
  expect((listed.json.keys as { name: string }[]).map((k) => k.name)).not.toContain('deploy-42');
}, 30_000);
