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

  it('disables, says so again on a repeat (a 204 is done as asked), and the key stops working', async () => {
    const first = await svc(['keys', 'disable', id], local.env);
    expect(first.exitCode).toBe(0);
    expect(first.stderr).toContain(`Disabled ${id}`);
    const again = await svc(['keys', 'disable', id], local.env);
    expect(again.exitCode).toBe(0);
    expect(again.stderr).toContain(`${id} (toggle) is disabled.`);
    const json = await svc(['keys', 'disable', id, '--json'], local.env);
    expect(JSON.parse(json.stdout).changed).toEqual([expect.objectContaining({ id, enabled: false, status: 'disabled' })]);
    const dead = await svc(['keys', 'ping'], { ...local.env, SVC_API_KEY: secret });
    expect(dead.exitCode).toBe(3);
  });

  it('enables again', async () => {
    const result = await svc(['keys', 'enable', id, '--json'], local.env);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ change: 'enable', changed: [{ id, enabled: true }] });
    expect((await svc(['keys', 'enable', id], local.env)).stderr).toContain(`${id} (toggle) is enabled.`);
  });

  it('answers 4 for an unknown id of any shape (ids are opaque), and 2 for one no URL can carry', async () => {
    expect((await svc(['keys', 'enable', 'key_doesnotexist'], local.env)).exitCode).toBe(4);
    const foreign = await svc(['keys', 'disable', 'NOT AN ID/..'], local.env);
    expect(foreign.exitCode).toBe(4);
    expect(foreign.stderr).toContain('No key with id or name NOT AN ID/..');
    expect((await svc(['keys', 'disable', '..'], local.env)).exitCode).toBe(2);
  });
});
