// tier: process
/**
 * A signal ends svc as that signal (docs/contract.md §C5): once svc has
 * done what SIGINT, SIGTERM or SIGHUP asks (finished the key in hand,
 * waited for an answer that holds a secret, printed --json's document), it
 * dies by it, on every path a signal takes through svc, so that what runs
 * svc (a shell loop, xargs, make, a CI runner) stops too; `$?` is still 128
 * + its number. Every wait ends at once: the config lock, a rate-limit
 * wait, a backoff, also where a command waits through a first signal.
 * Each test waits on an event (a line on stderr, a fault rule taken by its
 * request), never on time.
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { processStartTime } from '../../src/server/process-alive.js';
import { cleanEnv, SVC_BIN, svc } from '../helpers/cli.js';
import { useFaultyServer } from '../helpers/reference-faults.js';

const server = useFaultyServer();
const work = mkdtempSync(join(tmpdir(), 'svc-signals-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

type Child = ReturnType<typeof svc>;

/** Resolves once `text` has shown on the child's stderr. */
function onStderr(child: Child, text: string): Promise<void> {
  let stderr = '';
  return new Promise((resolve) =>
    child.stderr!.on('data', (chunk) => {
      stderr += String(chunk);
      if (stderr.includes(text)) resolve();
    }),
  );
}

/** Resolves once every fault rule set has been taken by its request: what they hold is out. */
const rulesTaken = () => expect.poll(async () => (await server.rules()).length).toBe(0);

const create = (name: string) => server.makeKey(name);
const left = (ids: readonly string[]) => server.left(ids);

const STATUS = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
const SIGNALS = Object.keys(STATUS) as (keyof typeof STATUS)[];

describe('a signal no command of svc listens for (bin/svc.js ends svc itself)', () => {
  it.each(SIGNALS)('%s while a request is out: svc dies by it, and under --json stdout holds the error document', async (signal) => {
    await server.fault({ then: 'hang', times: 0 });
    for (const json of [false, true]) {
      const child = svc([...(json ? ['--json'] : []), '--verbose', '--timeout', '60000', 'keys', 'list'], server.env);
      // --verbose says when the request goes out; the server holds it.
      await onStderr(child, '> GET');
      child.kill(signal);
      const result = await child;
      expect(result.signal).toBe(signal);
      if (json) expect(JSON.parse(result.stdout)).toEqual({ error: { message: `Stopped by ${signal} before the command was done.`, exitCode: STATUS[signal] } });
      else expect(result.stdout).toBe('');
    }
  });

  it("a shell's $? is still 128 + the signal's number", async () => {
    await server.fault({ then: 'hang', times: 0 });
    // In the background, so that the signal is svc's alone; SIGTERM, which a background job does not ignore.
    const script = `"$@" & echo "pid $!" >&2; wait $!; echo "status $?"`;
    const child = execa('sh', ['-c', script, 'sh', 'node', SVC_BIN, '--verbose', '--timeout', '60000', 'keys', 'list'], {
      env: cleanEnv(server.env),
      extendEnv: false,
      reject: false,
      timeout: 30_000,
    });
    let stderr = '';
    await new Promise<void>((resolve) =>
      child.stderr!.on('data', (chunk) => {
        stderr += String(chunk);
        if (stderr.includes('> GET')) resolve();
      }),
    );
    process.kill(Number(/pid (\d+)/.exec(stderr)![1]), 'SIGTERM');
    expect((await child).stdout).toBe('status 143');
  });
});

describe("a signal in svc's last milliseconds", () => {
  it('SIGINT while svc writes the compiled code of its first run, after the command is done: svc still dies by it', async () => {
    // Keeping the code is svc's last stretch of synchronous work before it exits: a signal then finds no turn of the
    // event loop left to run its listener unless svc makes one. The file it writes is made a FIFO here, so that svc
    // blocks in that write, after the command, until the signal has come.
    const cache = mkdtempSync(join(work, 'cache-'));
    const dir = join(cache, 'svc', 'compile-cache');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const child = svc(['keys', 'list'], { ...server.env, XDG_CACHE_HOME: cache });
    // The start cache comes at start-up, before the command runs; the command's own, named after it, once it is done.
    const startCache = await new Promise<string>((resolve) => {
      const watcher = watch(dir, (_, name) => {
        if (!String(name).endsWith('.v8')) return;
        watcher.close();
        resolve(String(name));
      });
    });
    const fifo = join(dir, `${startCache.replace(/\.v8$/, '')}.keys-list.v8.${child.pid}`);
    execFileSync('mkfifo', [fifo]);
    await expect.poll(() => readFileSync(`/proc/${child.pid}/wchan`, 'utf8'), { timeout: 20_000 }).toBe('wait_for_partner');
    child.kill('SIGINT');
    readFileSync(fifo);
    const result = await child;
    expect(result.stdout).toContain('bootstrap');
    expect(result.signal, result.stderr).toBe('SIGINT');
  });
});

describe('the waits between attempts, when no attempt did anything', () => {
  it.each(SIGNALS)('keys list, rate limited, off a terminal: %s ends the wait at once, by the signal', async (signal) => {
    await server.fault({ method: 'GET', status: 429, retryAfter: '60' });
    const child = svc(['--json', 'keys', 'list'], server.env);
    await onStderr(child, 'Rate limited; retrying in');
    child.kill(signal);
    const result = await child;
    expect(result.signal).toBe(signal);
    expect(JSON.parse(result.stdout)).toEqual({ error: { message: `Stopped by ${signal} before the command was done.`, exitCode: STATUS[signal] } });
  });

  it('keys list backing off after a reset connection: SIGTERM ends the wait at once', async () => {
    await server.fault({ method: 'GET', then: 'reset' });
    const child = svc(['keys', 'list'], server.env);
    await onStderr(child, 'retrying in');
    child.kill('SIGTERM');
    expect((await child).signal).toBe('SIGTERM');
  });

  it('keys create, whose answer svc waits through a first signal for: SIGHUP in the wait after a 429 stops at once, nothing made', async () => {
    await server.fault({ method: 'POST', path: '/user/api-keys', status: 429, retryAfter: '60' });
    const child = svc(['keys', 'create', 'refused-create'], server.env);
    await onStderr(child, 'Rate limited; retrying in');
    child.kill('SIGHUP');
    const result = await child;
    expect(result.signal).toBe('SIGHUP');
    expect(result.stderr).toContain("Stopped before the create was tried again: the server refused it for the rate limit (429), so no key named 'refused-create' was made.");
    expect(result.stdout).toBe('');
  });

  it('keys revoke of several keys, the key in hand refused with a 429: SIGTERM stops at once, the key in hand and those after it not revoked', async () => {
    const ids = [await create('wait-a'), await create('wait-b'), await create('wait-c')];
    await server.fault({ method: 'DELETE', path: `/user/api-keys/${ids[1]}`, status: 429, retryAfter: '60' });
    const child = svc(['keys', 'revoke', ...ids, '--yes', '--json'], server.env);
    await onStderr(child, 'Rate limited; retrying in');
    child.kill('SIGTERM');
    const result = await child;
    expect(result.signal).toBe('SIGTERM');
    expect(result.stderr).not.toContain('Stopping once');
    expect(result.stderr).toContain(`Stopped by SIGTERM before these were tried: ${ids[1]}, ${ids[2]}.`);
    expect((JSON.parse(result.stdout) as { changed: { id: string }[] }).changed.map((answer) => answer.id)).toEqual([ids[0]]);
    expect(await left(ids)).toEqual(ids.slice(1));
  });
});

describe('a signal a command waits through, then ends by', () => {
  it('keys revoke of several keys: the key in hand is finished, the rest left, and svc dies by SIGTERM with its --json document', async () => {
    const ids = [await create('batch-a'), await create('batch-b'), await create('batch-c')];
    await server.fault({ method: 'DELETE', path: `/user/api-keys/${ids[1]}`, delayMs: 3000 });
    const child = svc(['keys', 'revoke', ...ids, '--yes', '--json'], server.env);
    await rulesTaken();
    child.kill('SIGTERM');
    const result = await child;
    expect(result.signal).toBe('SIGTERM');
    expect(result.stderr).toContain(`Stopping once ${ids[1]} is done (SIGTERM again to stop at once).`);
    expect(result.stderr).toContain(`Stopped by SIGTERM before these were tried: ${ids[2]}.`);
    expect((JSON.parse(result.stdout) as { changed: { id: string }[] }).changed.map((answer) => answer.id)).toEqual(ids.slice(0, 2));
    expect(await left(ids)).toEqual([ids[2]]);
  });

  it.each([
    ['keys revoke, whose key in hand then fails', (id: string) => ({ method: 'DELETE', path: `/user/api-keys/${id}`, delayMs: 1500, status: 400 }), (id: string) => ['keys', 'revoke', id, '--yes', '--json']],
    ['keys disable, whose change then fails', (id: string) => ({ method: 'PATCH', path: `/user/api-keys/${id}`, delayMs: 1500, status: 400 }), (id: string) => ['keys', 'disable', id, '--json']],
    ['keys create, whose create is then refused', () => ({ method: 'POST', path: '/user/api-keys', delayMs: 1500, status: 400 }), () => ['keys', 'create', 'refused-after-sigint', '--json']],
  ])('%s: the failure is said, and svc dies by the SIGINT it held (a loop around it stops)', async (_, rule, args) => {
    const id = await create('held-then-failed');
    await server.fault(rule(id));
    const child = svc(args(id), server.env);
    await rulesTaken();
    child.kill('SIGINT');
    const result = await child;
    expect(result.signal, result.stderr).toBe('SIGINT');
    expect(result.stderr).toMatch(/error: .*400/);
    const { error } = JSON.parse(result.stdout) as { error: { exitCode: number; status: number } };
    expect(error).toMatchObject({ exitCode: 130, status: 400 });
  });

  it("keys create whose answer is lost after a first SIGINT: svc looks for the key, says what it found, and dies by SIGINT", async () => {
    await server.fault({ method: 'POST', path: '/user/api-keys', then: 'hang' });
    const child = svc(['--json', '--timeout', '3000', 'keys', 'create', 'lost-after-sigint'], server.env);
    await rulesTaken();
    child.kill('SIGINT');
    const result = await child;
    expect(result.signal).toBe('SIGINT');
    expect(result.stderr).toContain('Interrupted while the create was out: waiting for its answer');
    const { error } = JSON.parse(result.stdout) as { error: { message: string; exitCode: number } };
    expect(error.exitCode).toBe(130);
    expect(error.message).toContain("No key named 'lost-after-sigint' made since the request began is in the list yet.");
  });

  it('keys create with stdout on a full device and the revoke of the lost key held: SIGTERM is waited through, the key revoked, then svc dies by it', async () => {
    await server.fault({ method: 'DELETE', path: '/user/api-keys/*', delayMs: 3000 });
    // svc's own stdout, not a pipe through this process: each write svc makes fails with ENOSPC.
    const full = openSync('/dev/full', 'w');
    const child = spawn('node', [SVC_BIN, 'keys', 'create', 'unwritten'], { env: cleanEnv(server.env), stdio: ['ignore', full, 'pipe'] });
    closeSync(full);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const ended = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
    await rulesTaken();
    child.kill('SIGTERM');
    const result = { signal: await ended, stderr };
    expect(result.signal).toBe('SIGTERM');
    expect(result.stderr).toMatch(/Revoking the new key key_\w+ before stopping: nobody has its secret \(SIGTERM again to stop at once\)\./);
    expect(result.stderr).toMatch(/the secret is lost \(svc keeps no copy\), so svc revoked the key\./);
    expect(JSON.parse((await svc(['keys', 'list', '--name', 'unwritten', '--json'], server.env)).stdout).keys).toEqual([]);
  });
});

describe('a wait svc must see through', () => {
  it('the revoke of a new key whose secret went nowhere, refused with a 429: SIGTERM in its wait is waited through, the key revoked, then svc dies by it', async () => {
    await server.fault({ method: 'DELETE', path: '/user/api-keys/*', status: 429, retryAfter: '2' });
    const child = svc(['keys', 'create', 'undelivered', '--to-command', 'cat >/dev/null; exit 3', '--on-delivery-failure', 'revoke'], server.env);
    await onStderr(child, 'Rate limited; retrying in');
    child.kill('SIGTERM');
    const result = await child;
    expect(result.signal).toBe('SIGTERM');
    expect(result.stderr).toMatch(/Revoking the new key key_\w+ before stopping: nobody has its secret \(SIGTERM again to stop at once\)\./);
    expect(result.stderr).toMatch(/the new key key_\w+, whose secret nobody saw, was revoked/);
    expect(JSON.parse((await svc(['keys', 'list', '--name', 'undelivered', '--json'], server.env)).stdout).keys).toEqual([]);
  });
});

describe('svc run', () => {
  const command = ['node', '-e', 'setTimeout(() => {}, 60000)'];

  it('SIGTERM while it reads the server\'s clock: nothing made, no command run, svc dies by SIGTERM', async () => {
    await server.fault({ method: 'GET', then: 'hang' });
    const child = svc(['--verbose', 'run', '--ephemeral', '--', ...command], server.env);
    await onStderr(child, '> GET');
    child.kill('SIGTERM');
    const result = await child;
    expect(result.signal).toBe('SIGTERM');
    expect((await server.seen()).filter((line) => line.startsWith('POST'))).toEqual([]);
  });

  it("a second SIGINT while its create is out: svc stops at once, dies by SIGINT, and its reaper finds the key the create made and revokes it", async () => {
    await server.fault({ method: 'POST', path: '/user/api-keys', then: 'hang', after: true });
    const child = svc(['--verbose', 'run', '--ephemeral', '--name', 'run-twice', '--', ...command], server.env);
    await onStderr(child, '> POST');
    child.kill('SIGINT');
    await onStderr(child, "waiting for the create's outcome");
    child.kill('SIGINT');
    const result = await child;
    expect(result.signal).toBe('SIGINT');
    expect(result.stderr).toContain("Stopped while the create was out: a key named 'run-twice' may have been made; svc's reaper goes on looking for it");
    // The reaper shares svc's stderr: it has said its word by the time the stream closes.
    expect(result.stderr).toMatch(/It revoked the key svc's create made meanwhile, key_\w+, whose secret nobody saw\./);
  });

  it.each([
    ['SIGKILL', 137],
    ['SIGSEGV', 139],
  ] as const)('a command that dies by %s: svc passes the status on, and exits with it (no signal of its own)', async (signal, status) => {
    const result = await svc(['run', '--', 'node', '-e', `process.kill(process.pid, '${signal}')`], server.env);
    expect(result.signal).toBeUndefined();
    expect(result.exitCode).toBe(status);
  });
});

describe('the wait for the config lock, held by a live process', () => {
  it('SIGTERM ends it at once: nothing saved, the document under --json, and svc dies by SIGTERM', async () => {
    const dir = join(work, 'locked');
    mkdirSync(dir, { mode: 0o700 });
    const lock = join(dir, 'config.json.lock');
    // This test's process: alive, and no svc that will give the lock back.
    const held = `${process.pid} ${'0'.repeat(32)} ${processStartTime(process.pid)}\n`;
    writeFileSync(lock, held);
    const env = { SVC_CONFIG_DIR: dir, SVC_BASE_URL: server.env.SVC_BASE_URL! };
    const child = svc(['--json', 'login', '--with-key'], env, { input: server.env.SVC_API_KEY! });
    // Said once the wait has lasted a second: svc is waiting.
    await onStderr(child, `Waiting for another svc (pid ${process.pid})`);
    child.kill('SIGTERM');
    const result = await child;
    expect(result.signal).toBe('SIGTERM');
    const said = `Stopped by SIGTERM while waiting for another svc (pid ${process.pid}) to finish its change to ${join(dir, 'config.json')}: profile 'default' was not saved. Nothing was changed.`;
    expect(result.stderr).toContain(said);
    expect(JSON.parse(result.stdout)).toEqual({ error: { message: said, exitCode: 143 } });
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
    expect(readFileSync(lock, 'utf8')).toBe(held);
  });
});
