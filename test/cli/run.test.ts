// tier: in-process
import { describe, expect, it } from 'vitest';
import { call, svc, useLocalServer } from '../helpers/in-process.js';
import { signalsAt } from '../helpers/signals.js';

// svc run where its command is never started (docs/contract.md §C10): what
// it refuses, a create whose answer is lost, signals before the command.
// test/e2e/run.test.ts runs commands.

const local = useLocalServer({ plan: 'pro' });

const fault = (rule: Record<string, unknown>) => call(local.server.url, 'POST', '/_local/faults', local.server.adminToken, { rules: [rule] });
const named = async (name: string) =>
  (JSON.parse((await svc(['keys', 'list', '--json'], local.env)).stdout) as { keys: { id: string; name: string }[] }).keys.filter((key) => key.name === name);
/** The server's log, oldest first. */
const requests = async (limit: number) =>
  ((await call(local.server.url, 'GET', `/_local/requests?limit=${limit}`, local.server.adminToken)).json.requests as { method: string; status: number }[])
    .reverse()
    .map((r) => `${r.method} ${r.status}`);

/** Each of `signals` delivered as a request with its method goes out. */
const signalsOn = (signals: { method: string; signal: NodeJS.Signals }[]) =>
  signalsAt((req) => signals.filter((s) => s.method === req.method).map((s) => s.signal));

describe('svc run refuses, before any request', () => {
  it.each([
    [['--ephemeral', '25h'], 'is too long: a key made for one command lives at most 24h'],
    [['--ephemeral', '5 years'], "Invalid duration '5 years'"],
    [['--ephemeral', 'deploy.sh'], "--ephemeral takes 'deploy.sh' for its duration: put -- before the command"],
    [['--name', 'x'], '--name names the key that --ephemeral makes'],
    [['--env', '1X'], "--env 1X is no environment variable's name"],
    [['--env', 'SVC_BASE_URL'], "that variable holds the server's address"],
    [['--env', 'PATH'], 'the command, or what starts it, reads that variable for itself'],
    [['--env', 'ld_preload'], 'the command, or what starts it, reads that variable for itself'],
  ])('%j', async (args, message) => {
    const result = await svc(['run', ...args, '--', 'true'], local.env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(message);
  });

  it('without a key: exit 3, as every command that needs one', async () => {
    const result = await svc(['run', '--', 'true'], { ...local.env, SVC_API_KEY: undefined });
    expect(result.exitCode).toBe(3);
  });
});

describe('svc run --ephemeral, a create whose answer is lost', () => {
  it('runs no command; the key the look finds is told by the expiry svc drew, and revoked', async () => {
    await fault({ method: 'POST', path: '/user/api-keys', status: 503, after: true });
    const result = await svc(['run', '--ephemeral', '--name', 'lost answer', '--', 'no-such-command-anywhere'], local.env);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("It did take effect: a key named 'lost answer' appeared since the request began, made by this create");
    expect(result.stderr).toMatch(/key_[a-z0-9]+ {2}created \S+ {2}revoked now/);
    expect(await named('lost answer')).toEqual([]);
    expect(result.stderr).not.toContain('no-such-command-anywhere');
  });

  it('under its default name, also when a job started in the same second made a key of that name and pattern', async () => {
    const second = (await call(local.server.url, 'GET', '/_local/clock', local.server.adminToken)).json.now.replace(/\.\d+Z$/, 'Z');
    const other = await call(local.server.url, 'POST', '/api/service/user/api-keys', local.env.SVC_API_KEY, { name: `run true ${second} abcdef` });
    await fault({ method: 'POST', path: '/user/api-keys', then: 'reset', after: true });
    const result = await svc(['run', '--ephemeral', '--json', '--', 'true'], local.env);
    expect(result.exitCode).toBe(1);
    const { orphans, candidates } = JSON.parse(result.stdout).error;
    expect(orphans).toHaveLength(1);
    expect(orphans[0]).toMatchObject({ revoked: true, name: expect.stringMatching(/^run true \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ [a-z0-9]{6}$/) });
    expect(candidates).toEqual([]);
    const runKeys = JSON.parse((await svc(['keys', 'list', '--json', '--name', 'run true'], local.env)).stdout).keys as { id: string }[];
    expect(runKeys.map((k) => k.id)).toEqual([other.json.id]);
  });
});

describe('signals to svc run --ephemeral before the command', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const)('%s during the clock read: nothing is made, exit %i', async (signal, status) => {
    const result = await svc(['run', '--ephemeral', '--name', `early ${signal}`, '--', 'true'], local.env, { deps: signalsOn([{ method: 'GET', signal }]) });
    expect(result.exitCode).toBe(status);
    expect(result.stderr).toBe('');
    expect(await named(`early ${signal}`)).toEqual([]);
  });

  it('one during the create: its answer is waited for, the key revoked, the command not run', async () => {
    const result = await svc(['run', '--ephemeral', '--name', 'one signal', '--', 'no-such-command-anywhere'], local.env, {
      deps: signalsOn([{ method: 'POST', signal: 'SIGTERM' }]),
    });
    expect(result.exitCode).toBe(143);
    expect(result.stderr).toContain("SIGTERM: waiting for the create's answer");
    expect(result.stderr).toMatch(/Revoked key key_\w+\./);
    expect(await requests(2)).toEqual(['POST 201', 'DELETE 200']);
    expect(await named('one signal')).toEqual([]);
  });

  it('a second during the create: svc stops at once, naming the key that may be made and its expiry', async () => {
    await fault({ method: 'POST', path: '/user/api-keys', delayMs: 300 });
    const result = await svc(['run', '--ephemeral', '--name', 'two signals', '--', 'true'], local.env, {
      deps: signalsOn([
        { method: 'POST', signal: 'SIGINT' },
        { method: 'POST', signal: 'SIGINT' },
      ]),
    });
    expect(result.exitCode).toBe(130);
    expect(result.stderr).toMatch(/Stopped while the create was out: a key named 'two signals' may have been made; it works until \S+Z unless revoked\./);
    expect(result.stderr).toContain("svc keys list --name 'two signals'");
  });
});
