// tier: process
/**
 * README.md's "Running a command with a key" CI example, run as written:
 * its shell block, with the built svc first on PATH, against a reference
 * server, in a directory whose deploy.sh checks the key it was given.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { afterAll, expect, it } from 'vitest';
import { keyHint } from '../../src/contract/key-format.js';
import { cleanEnv, SVC_BIN } from '../helpers/cli.js';
import { call, useLocalServer } from '../helpers/in-process.js';

const README = resolve(import.meta.dirname, '../../README.md');
const dir = mkdtempSync(join(tmpdir(), 'svc-readme-run-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const local = useLocalServer({ plan: 'pro' });

/** The first ```sh block of a README subsection. */
function example(heading: string): string {
  const text = readFileSync(README, 'utf8');
  const start = text.indexOf(`\n### ${heading}\n`);
  if (start === -1) throw new Error(`README.md has no subsection "${heading}"`);
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(start));
  if (!block) throw new Error(`the subsection "${heading}" has no sh example`);
  return block[1]!;
}

it('gives the deploy step a key of its own, masked in its log and revoked when it ends', async () => {
  const bin = join(dir, 'bin');
  const work = join(dir, 'work');
  for (const d of [bin, work]) mkdirSync(d);
  writeFileSync(join(bin, 'svc'), `#!/bin/sh\nexec "${process.execPath}" "${SVC_BIN}" "$@"\n`);
  chmodSync(join(bin, 'svc'), 0o755);
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
  writeFileSync(join(work, 'example.sh'), example('Running a command with a key'));

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
