// tier: in-process
/**
 * Secrets svc hands on in a CI job (issue 46): on GitHub Actions
 * (GITHUB_ACTIONS=true) each is registered with the runner's log masking
 * (`::add-mask::SECRET`, on stderr) before any line that holds it is
 * written anywhere svc writes; anywhere else no such line is ever printed.
 * `svc run` and --to-command, which start processes, are in
 * test/e2e/run.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../../helpers/in-process.js';

const local = useLocalServer({ plan: 'pro' });
const dir = mkdtempSync(join(tmpdir(), 'svc-ci-delivery-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY = /sk_[A-Za-z0-9]{64}/;
const ACTIONS = { GITHUB_ACTIONS: 'true', CI: 'true' };

/** Each way a command hands on a new secret, and where the secret then is. */
const HANDING_ON: { name: string; args: (n: number) => string[]; secretIn?: (n: number) => string }[] = [
  { name: 'keys create, piped', args: (n) => ['keys', 'create', `ci-${n}`] },
  { name: 'keys create --json', args: (n) => ['keys', 'create', `ci-${n}`, '--json'] },
  { name: 'keys create --query key.secret', args: (n) => ['keys', 'create', `ci-${n}`, '--query', 'key.secret'] },
  { name: 'keys create --quiet', args: (n) => ['keys', 'create', `ci-${n}`, '--quiet'] },
  { name: 'keys create --to-file', args: (n) => ['keys', 'create', `ci-${n}`, '--to-file', join(dir, `${n}.env`)], secretIn: (n) => readFileSync(join(dir, `${n}.env`), 'utf8') },
  { name: 'svc api POST /user/api-keys', args: (n) => ['api', '/user/api-keys', '-X', 'POST', '-f', `name=ci-${n}`] },
];

describe('on GitHub Actions', () => {
  it.each(HANDING_ON.map((c, n) => [c.name, c, n] as const))('%s: the secret is registered, once, before any line that holds it', async (_, c, n) => {
    const result = await svc(c.args(n), { ...local.env, ...ACTIONS });
    expect(result.exitCode).toBe(0);
    const secret = KEY.exec(c.secretIn?.(n) ?? result.stdout)![0];
    const lines = result.both.split('\n');
    const registered = lines.indexOf(`::add-mask::${secret}`);
    expect(registered).toBeGreaterThanOrEqual(0);
    expect(lines.findIndex((line) => line.includes(secret))).toBe(registered);
    expect(lines.filter((line) => line.startsWith('::add-mask::'))).toHaveLength(1);
    // stdout stays data: `KEY=$(svc keys create ci)` takes the secret alone, and --json one document.
    expect(result.stdout).not.toContain('::add-mask::');
  });

  it('keys rotate registers the new secret, not the old one', async () => {
    const old = (JSON.parse((await svc(['keys', 'create', 'to-rotate', '--json'], local.env)).stdout) as { key: { id: string; secret: string } }).key;
    const result = await svc(['keys', 'rotate', old.id, '--yes', '--json'], { ...local.env, ...ACTIONS });
    expect(result.exitCode).toBe(0);
    const secrets = [...result.stdout.matchAll(new RegExp(KEY, 'g'))].map(([found]) => found);
    expect(secrets).not.toContain(old.secret);
    expect(result.stderr.split('\n').filter((line) => line.startsWith('::add-mask::'))).toEqual([`::add-mask::${secrets[0]}`]);
  });
});

describe('anywhere else', () => {
  const ELSEWHERE: Record<string, string | undefined>[] = [{}, { CI: 'true' }, { CI: 'true', GITLAB_CI: 'true' }, { GITHUB_ACTIONS: 'false' }, { GITHUB_ACTIONS: '' }];
  it('no ::add-mask:: line is ever printed', async () => {
    for (const [i, env] of ELSEWHERE.entries()) {
      for (const [n, c] of HANDING_ON.entries()) {
        const result = await svc(c.args(100 + i * 10 + n), { ...local.env, ...env });
        expect({ env, name: c.name, exitCode: result.exitCode, masked: result.both.includes('::add-mask::') }).toEqual({ env, name: c.name, exitCode: 0, masked: false });
      }
    }
  });
});
