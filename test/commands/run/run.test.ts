// tier: in-process
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createUndiciTransport, type HttpResponse, type Transport } from '../../../src/client/transport.js';
import { call, svc, useLocalServer } from '../../helpers/in-process.js';
import { recordingReaper } from '../../helpers/reaper.js';
import { signalsAt } from '../../helpers/signals.js';

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
    [['--ephemeral', '10m', '--grace', '10m'], '--grace 10m is as long as the key lives'],
    [['--grace', '3s'], '--grace is how long --ephemeral gives the command'],
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
    const result = await svc(['run', '--ephemeral', '--name', 'lost answer', '--', 'true'], local.env);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("It did take effect: a key named 'lost answer' appeared since the request began, made by this create");
    expect(result.stderr).toMatch(/key_[a-z0-9]+ {2}created \S+ {2}revoked now/);
    expect(await named('lost answer')).toEqual([]);
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
    const result = await svc(['run', '--ephemeral', '--name', 'one signal', '--', 'true'], local.env, {
      deps: signalsOn([{ method: 'POST', signal: 'SIGTERM' }]),
    });
    expect(result.exitCode).toBe(143);
    expect(result.stderr).toContain("SIGTERM: waiting for the create's outcome");
    expect(result.stderr).toMatch(/Revoked key key_\w+\./);
    expect(await requests(2)).toEqual(['POST 201', 'DELETE 200']);
    expect(await named('one signal')).toEqual([]);
  });

  it.each([
    ['a reaper', true],
    ['no reaper', false],
  ])('a second during the create, with %s: svc stops at once; the reaper looks on for the key, or svc names it and its expiry', async (_, withReaper) => {
    await fault({ method: 'POST', path: '/user/api-keys', delayMs: 300 });
    const reaper = recordingReaper();
    const result = await svc(['run', '--ephemeral', '--name', 'two signals', '--', 'true'], local.env, {
      deps: {
        ...signalsOn([
          { method: 'POST', signal: 'SIGINT' },
          { method: 'POST', signal: 'SIGINT' },
        ]),
        startReaper: withReaper ? reaper.start : () => null,
      },
    });
    expect(result.exitCode).toBe(130);
    if (withReaper) {
      expect(result.stderr).toMatch(/may have been made; svc's reaper goes on looking for it, by the expiry svc drew for it \(\S+Z\), and revokes it\./);
      // Not told "done": the create is the reaper's to settle.
      expect(reaper.orders.map((order) => Object.keys(order)[0])).toEqual(['server', 'creating']);
    } else {
      expect(result.stderr).toMatch(/Stopped while the create was out: a key named 'two signals' may have been made; it works until \S+Z unless revoked\./);
      expect(result.stderr).toContain("svc keys list --name 'two signals'");
    }
  });
});

/** The reference server's answers, each as `change` rewrites it (a proxy that drops or alters fields). */
function rewriting(change: (req: { method: string; url: string }, res: HttpResponse) => HttpResponse): Transport {
  const real = createUndiciTransport();
  return async (req) => change(req, await real(req));
}

const withJson = (res: HttpResponse, edit: (body: Record<string, unknown>) => void): HttpResponse => {
  const body = JSON.parse(res.text) as Record<string, unknown>;
  edit(body);
  return { ...res, text: JSON.stringify(body) };
};

const isCreate = (req: { method: string; url: string }) => req.method === 'POST' && req.url.endsWith('/user/api-keys');

describe("svc run --ephemeral: the expiry is the server's", () => {
  it("an answer without the expiry: svc reads it from the key's record, and says that one", async () => {
    const transport = rewriting((req, res) => (isCreate(req) ? withJson(res, (body) => delete body.expiresAt) : res));
    const reaper = recordingReaper();
    const result = await svc(['run', '--ephemeral', '--name', 'expiry read back', '--', 'true'], local.env, {
      deps: { transport, startReaper: reaper.start, ...signalsOn([{ method: 'DELETE', signal: 'SIGTERM' }]) },
    });
    const made = /Made key (key_\w+) for the command; it expires at (\S+)\./.exec(result.stderr);
    expect(made, result.stderr).not.toBeNull();
    const record = await call(local.server.url, 'GET', '/_local/requests?limit=20', local.server.adminToken);
    expect(JSON.stringify(record.json)).toContain(`/user/api-keys/${made![1]}`);
    expect(reaper.orders.some((order) => 'key' in order && order.key.expiresAt === made![2])).toBe(true);
  });

  it.each([
    ['none at all', (body: Record<string, unknown>) => delete body.expiresAt, 'the server gave the key no expiry svc can read'],
    ['a later one', (body: Record<string, unknown>) => (body.expiresAt = new Date(Date.parse(String(body.expiresAt)) + 3_600_000).toISOString()), 'the server gave the key a later expiry'],
  ])('%s: the key is revoked at once and the command not run (exit 1)', async (_, edit, message) => {
    const name = `expiry ${_}`;
    const transport = rewriting((req, res) => (isCreate(req) || (req.method === 'GET' && /\/user\/api-keys\/\w+$/.test(req.url)) ? withJson(res, edit) : res));
    const file = `/tmp/svc-run-never-${process.pid}`;
    const result = await svc(['run', '--ephemeral', '--name', name, '--', 'touch', file], local.env, { deps: { transport } });
    expect(result.exitCode, result.stderr).toBe(1);
    expect(result.stderr).toContain(`The command was not run: ${message}`);
    expect(result.stderr).toMatch(/The key it made, key_\w+, is revoked\./);
    expect(await named(name)).toEqual([]);
  });
});

describe('svc run --ephemeral: what the reaper is told', () => {
  it('the server and svc key, the create about to go out, then the key, then done, on a path that revokes itself', async () => {
    const reaper = recordingReaper();
    const result = await svc(['run', '--ephemeral', '--name', 'told', '--', 'true'], local.env, {
      deps: { startReaper: reaper.start, ...signalsOn([{ method: 'POST', signal: 'SIGINT' }]) },
    });
    expect(result.exitCode).toBe(130);
    expect(reaper.orders.map((order) => Object.keys(order)[0])).toEqual(['server', 'creating', 'key', 'done']);
    expect(reaper.orders[1]).toMatchObject({ creating: { name: 'told', marks: { name: false, expiresAtMs: expect.any(Number) } } });
    expect(reaper.orders[0]).toMatchObject({ server: { apiKey: local.server.apiKey, baseUrl: local.server.url } });
  });

  it('done also when no key was made (a lost create)', async () => {
    await fault({ method: 'POST', path: '/user/api-keys', status: 503 });
    const reaper = recordingReaper();
    await svc(['run', '--ephemeral', '--name', 'never made', '--', 'true'], local.env, { deps: { startReaper: reaper.start } });
    expect(reaper.orders.map((order) => Object.keys(order)[0])).toEqual(['server', 'creating', 'done']);
  });

  it('a reaper that does not start is said, naming until when the key works', async () => {
    const result = await svc(['run', '--ephemeral', '--name', 'no reaper', '--', 'true'], local.env, {
      deps: { startReaper: () => null, ...signalsOn([{ method: 'POST', signal: 'SIGINT' }]) },
    });
    expect(result.stderr).toMatch(/svc's reaper did not start: should svc be killed, the key works until \S+Z\./);
  });
});

describe('svc run --ephemeral: a revoke is done only when the server says so', () => {
  it('a 404 to the revoke of a key that still works: not revoked, named, exit 1', async () => {
    await fault({ method: 'DELETE', path: '/user/api-keys/*', status: 404, times: 0 });
    const result = await svc(['run', '--ephemeral', '--name', 'answered 404', '--', 'true'], local.env, { deps: signalsOn([{ method: 'POST', signal: 'SIGTERM' }]) });
    await call(local.server.url, 'DELETE', '/_local/faults', local.server.adminToken);
    expect(result.exitCode).toBe(1);
    const [left] = await named('answered 404');
    expect(result.stderr).toContain(`The key made for the command, ${left!.id}, was answered 404 to its revoke`);
    expect(result.stderr).toContain('but it still works: it is not revoked');
    expect(result.stderr).toContain(`revoke it with \`svc keys revoke ${left!.id}\``);
    expect(result.stderr).not.toContain('Revoked key');
    expect((await svc(['keys', 'revoke', '--yes', left!.id], local.env)).exitCode).toBe(0);
  });

  it('a 404 to the revoke of a key that is gone: revoked', async () => {
    // The revoke lands, and its answer is replaced by a 404 (a proxy that answers so after a retry, say).
    await fault({ method: 'DELETE', path: '/user/api-keys/*', status: 404, after: true });
    const result = await svc(['run', '--ephemeral', '--name', 'gone 404', '--', 'true'], local.env, { deps: signalsOn([{ method: 'POST', signal: 'SIGTERM' }]) });
    expect(result.exitCode, result.stderr).toBe(143);
    expect(result.stderr).toMatch(/Revoked key key_\w+\./);
    expect(await named('gone 404')).toEqual([]);
  });
});

describe('svc run: a command that cannot start', () => {
  const plain = join(mkdtempSync(join(tmpdir(), 'svc-run-plain-')), 'not-executable');
  writeFileSync(plain, 'echo never\n', { mode: 0o644 });

  const noInterpreter = join(mkdtempSync(join(tmpdir(), 'svc-run-shebang-')), 'script');
  writeFileSync(noInterpreter, '#!/nonexistent/interpreter -x\necho never\n', { mode: 0o755 });

  it.each([
    ['no-such-command-anywhere', 127, 'no such command'],
    [plain, 126, 'it is not executable (permission denied)'],
    [tmpdir(), 126, 'it is a directory'],
    [noInterpreter, 127, 'its interpreter, /nonexistent/interpreter (its #! line), is not there'],
    ['', 2, 'The command to run is empty'],
  ])('%s: exit %i before any request, no key made', async (command, status, message) => {
    const before = (await call(local.server.url, 'GET', '/_local/requests?limit=1', local.server.adminToken)).json;
    const result = await svc(['run', '--ephemeral', '--', command], local.env);
    expect(result.exitCode).toBe(status);
    expect(result.stderr).toContain(message);
    expect((await call(local.server.url, 'GET', '/_local/requests?limit=1', local.server.adminToken)).json).toEqual(before);
  });

});

describe('svc run --ephemeral: the revoke after the job', () => {
  it('--no-wait does not skip it: a 429 is waited through', async () => {
    await fault({ method: 'DELETE', path: '/user/api-keys/*', status: 429, code: 'RATE_LIMITED', retryAfter: '7' });
    const result = await svc(['--no-wait', 'run', '--ephemeral', '--name', 'no-wait revoke', '--', 'true'], local.env, {
      deps: signalsOn([{ method: 'POST', signal: 'SIGTERM' }]),
    });
    expect(result.stderr).toMatch(/Revoked key key_\w+\./);
    expect(result.slept.some((ms) => ms >= 7_000)).toBe(true);
    expect(await named('no-wait revoke')).toEqual([]);
  });
});

describe("an svc inside an ephemeral job: the job's key ends with the job", () => {
  it('is not advised to be rotated; any other key expiring soon is', async () => {
    const made = await call(local.server.url, 'POST', '/api/service/user/api-keys', local.server.apiKey!, {
      name: 'job key',
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const { id, secret } = made.json as { id: string; secret: string };
    const inJob = await svc(['keys', 'list'], { ...local.env, SVC_API_KEY: secret, SVC_EPHEMERAL_KEY_ID: id });
    expect(inJob.exitCode, inJob.stderr).toBe(0);
    expect(inJob.stderr).not.toContain('svc keys rotate');
    const elsewhere = await svc(['keys', 'list'], { ...local.env, SVC_API_KEY: secret });
    expect(elsewhere.stderr).toContain(`svc keys rotate ${id}`);
    await svc(['keys', 'revoke', '--yes', id], local.env);
  });
});

describe('svc run --ephemeral: a server that loses answers', () => {
  it("a revoke whose answer is lost and whose retry is answered 404: checked with the key, and revoked", async () => {
    await fault({ method: 'DELETE', path: '/user/api-keys/*', then: 'reset', after: true });
    const result = await svc(['run', '--ephemeral', '--name', 'lost revoke', '--', 'true'], local.env, { deps: signalsOn([{ method: 'POST', signal: 'SIGTERM' }]) });
    expect(result.stderr).toMatch(/Revoked key key_\w+\./);
    expect(await named('lost revoke')).toEqual([]);
  });

  it('a retry answered 404 while the key still works (the lost attempt never arrived, a route that answers 404): not revoked, exit 1', async () => {
    await fault({ method: 'DELETE', path: '/user/api-keys/*', then: 'reset' });
    await fault({ method: 'DELETE', path: '/user/api-keys/*', status: 404, times: 0 });
    const result = await svc(['run', '--ephemeral', '--name', 'never revoked', '--', 'true'], local.env, { deps: signalsOn([{ method: 'POST', signal: 'SIGTERM' }]) });
    await call(local.server.url, 'DELETE', '/_local/faults', local.server.adminToken);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('was answered 404 to its revoke (on a retry, after an answer that was lost), but it still works: it is not revoked');
    const [left] = await named('never revoked');
    expect((await svc(['keys', 'revoke', '--yes', left!.id], local.env)).exitCode).toBe(0);
  });
});

describe('svc run --ephemeral: a signal held through a lost create', () => {
  it('ends svc by that signal, once the look is over and the key it made is revoked', async () => {
    await fault({ method: 'POST', path: '/user/api-keys', status: 503, after: true });
    const result = await svc(['run', '--ephemeral', '--name', 'held through the look', '--', 'true'], local.env, {
      deps: signalsOn([{ method: 'POST', signal: 'SIGTERM' }]),
    });
    expect(result.signal, result.stderr).toBe('SIGTERM');
    expect(result.exitCode).toBe(143);
    expect(result.stderr).toMatch(/revoked now/);
    expect(await named('held through the look')).toEqual([]);
  });
});
