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

describe('keys disable of the key svc is using', () => {
  it('is refused off a terminal without --yes (exit 2, nothing changed); asked about on one; --yes disables it', async () => {
    const own = await local.create('own-session');
    const other = await local.create('someone-else');
    const env = { ...local.env, SVC_API_KEY: own.secret };
    const refused = await svc(['keys', 'disable', own.id, other.id], env);
    expect(refused.exitCode, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(`Refusing to disable 'own-session' (${own.id}) without --yes: it is the key svc is using`);
    expect((await svc(['keys', 'ping'], env)).exitCode).toBe(0);
    expect(JSON.parse((await svc(['keys', 'view', other.id, '--json'], env)).stdout).enabled).toBe(true);
    // Another key is disabled unasked: the session's own key enables it again.
    expect((await svc(['keys', 'disable', other.id], env)).exitCode).toBe(0);

    const declined = await local.onTerminal(['keys', 'disable', 'own-session'], [{ confirm: false }], { env });
    expect(declined.exitCode).toBe(130);
    expect(declined.stderr).toMatch(/This is the key svc is using \(sk_\S+\): disabling it locks the session out until SVC_API_KEY holds another key\./);
    expect(declined.asked[0]).toContain(`Disable 'own-session' (${own.id})?`);
    expect((await svc(['keys', 'ping'], env)).exitCode).toBe(0);

    const done = await svc(['keys', 'disable', own.id, '--yes'], env);
    expect(done.exitCode, done.stderr).toBe(0);
    expect(done.stderr).toContain('That is the key svc is using: requests with it now answer 401 until it is enabled again, with another key.');
    expect((await svc(['keys', 'ping'], env)).exitCode).toBe(3);
  });
});
