// tier: in-process
import { beforeAll, describe, expect, it } from 'vitest';
import { svc } from '../../helpers/in-process.js';
import { useCommandTest } from '../../helpers/command-test.js';

const local = useCommandTest({ plan: 'pro' });

describe('keys enable / disable / revoke', () => {
  let id: string;
  let secret: string;
  beforeAll(async () => {
    ({ id, secret } = await local.create('toggle'));
  });

  it('refuses to revoke without --yes when nobody can be asked', async () => {
    const result = await svc(['keys', 'revoke', id], local.env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--yes');
  });

  it('revokes with --yes; a second revoke is 4, or 0 with --if-exists', async () => {
    const result = await svc(['keys', 'revoke', id, '--yes', '--json'], local.env);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ change: 'revoke', changed: [{ id, revoked: true }], alreadyGone: [], notFound: [], failed: [], notTried: [], incomplete: null });
    expect((await svc(['keys', 'ping'], { ...local.env, SVC_API_KEY: secret })).exitCode).toBe(3);
    const again = await svc(['keys', 'revoke', id, '--yes'], local.env);
    expect(again.exitCode).toBe(4);
    expect(again.stderr).toContain(id);
    const tolerant = await svc(['keys', 'revoke', id, '--yes', '--if-exists', '--json'], local.env);
    expect(tolerant.exitCode).toBe(0);
    expect(JSON.parse(tolerant.stdout)).toMatchObject({ changed: [], alreadyGone: [id] });
  });

  it('revokes several, carries on past a missing one and exits 4', async () => {
    const a = JSON.parse((await svc(['keys', 'create', 'a', '--json'], local.env)).stdout).key.id;
    const b = JSON.parse((await svc(['keys', 'create', 'b', '--json'], local.env)).stdout).key.id;
    const result = await svc(['keys', 'revoke', a, 'key_missing', b, '--yes', '--json'], local.env);
    expect(result.exitCode).toBe(4);
    expect(JSON.parse(result.stdout).changed).toEqual([
      { id: a, revoked: true },
      { id: b, revoked: true },
    ]);
    // A script tells which id was missing from the document itself, not only from the exit code.
    expect(JSON.parse(result.stdout)).toMatchObject({ alreadyGone: [], notFound: ['key_missing'], failed: [] });
    expect(result.stderr).toContain('key_missing');
  });
});
