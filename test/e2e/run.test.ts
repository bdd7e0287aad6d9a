// tier: process
/**
 * `svc run` (docs/contract.md §C10) with real commands: what the command
 * gets, the ephemeral key working while it runs and revoked after however
 * it ends, real SIGINT, SIGTERM and SIGHUP at each step (the create held
 * by a delay fault, the command running, the revoke held), SIGKILL (the
 * expiry, reached by moving the server's clock), a command that leaves a
 * child in the background, and the masking of its output. svc runs in this
 * process (main) where no signal is sent, and as the built bin/svc.js where
 * one is.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { keyHint } from '../../src/contract/key-format.js';
import { cleanEnv, SVC_BIN, svc as svcProcess } from '../helpers/cli.js';
import { call, svc, useLocalServer } from '../helpers/in-process.js';

const local = useLocalServer({ plan: 'pro' });
const dir = mkdtempSync(join(tmpdir(), 'svc-run-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await call(local.server.url, 'DELETE', '/_local/faults', local.server.adminToken);
});

/**
 * The command: records what it was given (the key in $PROBE_VAR, else
 * SVC_API_KEY) and whether the key works, says "ready", then does what its
 * arguments say.
 */
const PROBE = join(dir, 'probe.mjs');
writeFileSync(
  PROBE,
  `
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
const [out, mode, arg] = process.argv.slice(2);
const key = process.env[process.env.PROBE_VAR ?? 'SVC_API_KEY'];
const res = await fetch(process.env.SVC_BASE_URL + '/api/service/user/api-keys', { headers: { authorization: 'Bearer ' + key } });
const record = { key, baseUrl: process.env.SVC_BASE_URL, status: res.status, pid: process.pid, argv: process.argv, names: Object.keys(process.env) };
if (mode === 'fork') {
  // A child that outlives the command, holding its output open.
  record.background = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'inherit' }).pid;
}
writeFileSync(out, JSON.stringify(record));
console.log('ready');
if (mode === 'exit') process.exit(Number(arg));
if (mode === 'kill') process.kill(process.pid, 'SIGKILL');
if (mode === 'wait') setInterval(() => {}, 1000);
if (mode === 'print') {
  // The key in pieces, with a pause between, on both streams.
  const pause = () => new Promise((resolve) => setTimeout(resolve, 20));
  process.stdout.write('out ' + key.slice(0, 30));
  await pause();
  process.stderr.write('err ' + key.slice(0, 3));
  await pause();
  process.stdout.write(key.slice(30) + ' done\\n');
  await pause();
  process.stderr.write(key.slice(3) + '\\n');
}
if (mode === 'fork') process.exit(0);
`,
);

let files = 0;
/** A fresh file for the probe to record into, and a reading of it. */
function probeFile() {
  const path = join(dir, `probe-${++files}.json`);
  return {
    path,
    read: () => JSON.parse(readFileSync(path, 'utf8')) as { key: string; baseUrl: string; status: number; pid: number; argv: string[]; names: string[]; background?: number },
  };
}

const works = async (key: string) => (await call(local.server.url, 'GET', '/api/service/user/api-keys', key)).status;
const named = async (name: string) =>
  (JSON.parse((await svc(['keys', 'list', '--json'], local.env)).stdout) as { keys: { name: string }[] }).keys.filter((key) => key.name === name);
const fault = (rule: Record<string, unknown>) => call(local.server.url, 'POST', '/_local/faults', local.server.adminToken, { rules: [rule] });
/** The server's log, oldest first: method and status of each request. */
const requests = async (limit: number) =>
  ((await call(local.server.url, 'GET', `/_local/requests?limit=${limit}`, local.server.adminToken)).json.requests as { method: string; path: string; status: number }[])
    .reverse()
    .map((r) => `${r.method} ${r.status}`);

describe('svc run without --ephemeral', () => {
  it("gives the command the profile's key and the server's address, never in an argument or in svc's own output", async () => {
    const file = probeFile();
    const result = await svc(['run', '--', 'node', PROBE, file.path], local.env);
    expect(result.exitCode, result.stderr).toBe(0);
    const got = file.read();
    expect(got.key).toBe(local.server.apiKey);
    expect(got.baseUrl).toBe(local.server.url);
    expect(got.status).toBe(200);
    expect(got.argv.join(' ')).not.toContain(got.key);
    expect(result.stdout).toBe('ready');
    expect(result.stderr).toBe('');
  });

  it('--env puts the key in that variable, and SVC_API_KEY is not passed on', async () => {
    const file = probeFile();
    const result = await svc(['run', '--env', 'MEDIA_KEY', '--', 'node', PROBE, file.path], { ...local.env, PROBE_VAR: 'MEDIA_KEY' });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(file.read().key).toBe(local.server.apiKey);
    expect(file.read().names).not.toContain('SVC_API_KEY');
  });

  it("exits with the command's status", async () => {
    expect((await svc(['run', '--', 'node', PROBE, probeFile().path, 'exit', '5'], local.env)).exitCode).toBe(5);
    expect((await svc(['run', '--', 'node', PROBE, probeFile().path, 'kill'], local.env)).exitCode).toBe(128 + 9);
  });

  it('a command that does not exist: 127, with a message', async () => {
    const result = await svc(['run', '--', 'no-such-command-anywhere'], local.env);
    expect(result.exitCode).toBe(127);
    expect(result.stderr).toContain('Could not run `no-such-command-anywhere`: no such command.');
  });
});

describe('svc run --ephemeral', () => {
  it.each([
    ['exits 0', ['exit', '0'], 0],
    ['exits 3', ['exit', '3'], 3],
    ['is killed', ['kill'], 137],
  ])('a key of its own works while the command runs and is revoked when it %s', async (_, how, status) => {
    const file = probeFile();
    const result = await svc(['run', '--ephemeral', '10m', '--name', `ends-${status}`, '--', 'node', PROBE, file.path, ...how], local.env);
    expect(result.exitCode, result.stderr).toBe(status);
    const got = file.read();
    expect(got.key).not.toBe(local.server.apiKey);
    expect(got.status).toBe(200);
    expect(got.names).toContain('SVC_API_KEY');
    expect(await works(got.key)).toBe(401);
    expect(await named(`ends-${status}`)).toEqual([]);
    expect(result.stderr).toMatch(/^Made key key_\w+ for the command; it expires at \S+\.\nRevoked key key_\w+\.$/);
  });

  it('a revoke that fails names the key and exits 1', async () => {
    await fault({ method: 'DELETE', path: '/user/api-keys/*', status: 503, times: 0 });
    const file = probeFile();
    const result = await svc(['--max-wait', '0', 'run', '--ephemeral', '--', 'node', PROBE, file.path], local.env);
    expect(result.exitCode).toBe(1);
    const id = /Made key (key_\w+)/.exec(result.stderr)![1]!;
    expect(result.stderr).toContain(`The key made for the command, ${id}, could not be revoked`);
    expect(result.stderr).toContain(`revoke it with \`svc keys revoke ${id}\``);
    await call(local.server.url, 'DELETE', '/_local/faults', local.server.adminToken);
    expect(await works(file.read().key)).toBe(200);
    expect((await svc(['keys', 'revoke', '--yes', id], local.env)).exitCode).toBe(0);
  });
});

describe('masking', () => {
  it("replaces the secret by its hint in the command's stdout and stderr, also split across writes", async () => {
    const file = probeFile();
    const result = await svc(['run', '--', 'node', PROBE, file.path, 'print'], local.env);
    const key = local.server.apiKey!;
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe(`ready\nout ${keyHint(key)} done`);
    expect(result.stderr).toBe(`err ${keyHint(key)}`);
  });

  it("on GitHub Actions the key is registered with the runner before the command starts, and the command's own ::add-mask:: line passes whole", async () => {
    const actions = { ...local.env, GITHUB_ACTIONS: 'true', CI: 'true' };
    const script = 'echo "::add-mask::$SVC_API_KEY"; echo "key $SVC_API_KEY"';
    for (const flags of [[], ['--ephemeral']]) {
      const result = await svc(['run', ...flags, '--', 'sh', '-c', script], actions);
      expect(result.exitCode, result.stderr).toBe(0);
      const key = flags.length === 0 ? local.server.apiKey! : /^::add-mask::(sk_\w+)$/m.exec(result.stderr)![1]!;
      expect(result.stderr.split('\n').filter((line) => line.startsWith('::add-mask::'))).toEqual([`::add-mask::${key}`]);
      expect(result.stdout).toBe(`::add-mask::${key}\nkey ${keyHint(key)}`);
      // svc's own line comes first: the first time the key is written anywhere is as svc registers it.
      expect(result.both.indexOf(key)).toBe(result.both.indexOf(`::add-mask::${key}\n`) + '::add-mask::'.length);
    }
  });

  it('--no-masking passes the output on as it came', async () => {
    const result = await svc(['run', '--no-masking', '--', 'node', PROBE, probeFile().path, 'print'], local.env);
    expect(result.stdout).toBe(`ready\nout ${local.server.apiKey} done`);
  });
});

/** The built svc, with --verbose so that each request is told on stderr as it goes out. */
function spawned(args: string[]) {
  const child = svcProcess(['--verbose', 'run', ...args], local.env);
  let stdout = '';
  let stderr = '';
  const waiting: { stream: 'stdout' | 'stderr'; text: string; then: () => void }[] = [];
  const check = () => {
    for (const w of [...waiting]) {
      if ((w.stream === 'stdout' ? stdout : stderr).includes(w.text)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.then();
      }
    }
  };
  child.stdout!.on('data', (chunk) => {
    stdout += String(chunk);
    check();
  });
  child.stderr!.on('data', (chunk) => {
    stderr += String(chunk);
    check();
  });
  return {
    child,
    /** Sends `signal` to svc once `text` shows on `stream`. */
    signalOn(stream: 'stdout' | 'stderr', text: string, signal: NodeJS.Signals) {
      waiting.push({ stream, text, then: () => child.kill(signal) });
    },
    when: (stream: 'stdout' | 'stderr', text: string) =>
      new Promise<void>((resolve) => {
        waiting.push({ stream, text, then: resolve });
        check();
      }),
  };
}

describe.each(['SIGINT', 'SIGTERM', 'SIGHUP'] as const)('%s to svc run --ephemeral', (signal) => {
  it("before the create's answer: svc waits for it, runs no command, revokes the key and ends by the signal", async () => {
    await fault({ method: 'POST', path: '/user/api-keys', delayMs: 1000 });
    const file = probeFile();
    const name = `held create ${signal}`;
    const run = spawned(['--ephemeral', '--name', name, '--', 'node', PROBE, file.path]);
    run.signalOn('stderr', '> POST ', signal);
    const result = await run.child;
    expect(result.signal, result.stderr).toBe(signal);
    expect(result.stderr).toContain(`${signal}: waiting for the create's outcome, to revoke the key it makes`);
    expect(result.stderr).toMatch(/Revoked key key_\w+\./);
    expect(() => readFileSync(file.path)).toThrow();
    expect(await requests(2)).toEqual(['POST 201', 'DELETE 200']);
    expect(await named(name)).toEqual([]);
  });

  it('while the command runs: forwarded to its process group; the key is revoked, and svc ends as the command did, by the signal', async () => {
    const file = probeFile();
    const run = spawned(['--ephemeral', '--', 'node', PROBE, file.path, 'wait']);
    run.signalOn('stdout', 'ready', signal);
    const result = await run.child;
    expect(result.signal, result.stderr).toBe(signal);
    expect(file.read().status).toBe(200);
    expect(await works(file.read().key)).toBe(401);
  });

  it('during the revoke: svc waits for it to finish, then ends by the signal', async () => {
    await fault({ method: 'DELETE', path: '/user/api-keys/*', delayMs: 1000 });
    const file = probeFile();
    const run = spawned(['--ephemeral', '--', 'node', PROBE, file.path, 'exit', '4']);
    run.signalOn('stderr', '> DELETE ', signal);
    const result = await run.child;
    expect(result.signal, result.stderr).toBe(signal);
    expect(result.stderr).toContain(`${signal}: waiting for the revoke of key_`);
    expect(await works(file.read().key)).toBe(401);
  });
});

describe('a command that leaves a child in the background holding its output', () => {
  it('svc ends with the command, passes on what it printed, revokes the key and ends the child', async () => {
    const file = probeFile();
    const result = await spawned(['--ephemeral', '--', 'node', PROBE, file.path, 'fork']).child;
    const got = file.read();
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe('ready');
    expect(await works(got.key)).toBe(401);
    // The child was in the command's process group, which ends with the job.
    await expect.poll(() => alive(got.background!)).toBe(false);
  });
});

describe('SIGKILL to svc run --ephemeral', () => {
  it("during a create whose answer never comes: svc's reaper finds the key it made by its marks and revokes it", async () => {
    await fault({ method: 'POST', path: '/user/api-keys', then: 'hang', after: true });
    const name = 'killed mid-create';
    const run = spawned(['--ephemeral', '--name', name, '--', 'node', PROBE, probeFile().path, 'wait']);
    // Killed once the server has made the key: a request svc had only begun to send would make none.
    await expect.poll(async () => (await named(name)).length).toBe(1);
    run.child.kill('SIGKILL');
    const result = await run.child;
    expect(result.stderr).toMatch(/ended while it was making its command's key\.\nIt revoked the key svc's create made meanwhile, key_\w+, whose secret nobody saw\./);
    expect(await named(name)).toEqual([]);
  });

  it('during a create held before it is made: whether or not the server goes on to make it once svc is gone, no key is left', async () => {
    await fault({ method: 'POST', path: '/user/api-keys', delayMs: 1500 });
    const name = 'killed before the create';
    const run = spawned(['--ephemeral', '--name', name, '--', 'node', PROBE, probeFile().path, 'wait']);
    // Killed once the server holds the request (its fault is used up), while it waits out the delay.
    await expect.poll(async () => (await call(local.server.url, 'GET', '/_local/faults', local.server.adminToken)).json.rules.length).toBe(0);
    run.child.kill('SIGKILL');
    await run.child;
    expect(await named(name)).toEqual([]);
  });

  it("svc's reaper kills the command's process group and revokes the key", async () => {
    const file = probeFile();
    const run = spawned(['--ephemeral', '2m', '--', 'node', PROBE, file.path, 'wait']);
    await run.when('stdout', 'ready');
    run.child.kill('SIGKILL');
    const result = await run.child;
    const { key, pid } = file.read();
    await expect.poll(() => works(key)).toBe(401);
    await expect.poll(() => alive(pid)).toBe(false);
    expect(result.stderr).toMatch(
      /svc run's reaper: svc \(pid \d+\) ended before it had revoked its command's key\.\nIt killed what was left of the command \(process group \d+\)\.\nIt revoked the key made for the command, key_\w+\./,
    );
  });
});

/** A process that ended is no longer alive, reaped or not: a zombie's parent may be a first process that reaps nothing. */
function alive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]![0] !== 'Z';
  } catch {
    return false;
  }
}

describe('where svc run passes output on', () => {
  it('a terminal under CI (a runner\'s pseudo-terminal) gets the output through svc, masked', async () => {
    const result = await svc(['run', '--', 'sh', '-c', 'echo "out $SVC_API_KEY"'], { ...local.env, CI: 'true' }, { tty: true });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe(`out ${keyHint(local.server.apiKey!)}`);
  });

  it("a stderr that fails (a log on a full disk): svc's own failure is said on stdout", async () => {
    await fault({ method: 'DELETE', path: '/user/api-keys/*', status: 400, times: 0 });
    const full = openSync('/dev/full', 'w');
    const child = spawn(process.execPath, [SVC_BIN, 'run', '--ephemeral', '--', 'sh', '-c', 'echo ran'], {
      env: cleanEnv(local.env) as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', full],
    });
    closeSync(full);
    let stdout = '';
    child.stdout!.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    const code = await new Promise((resolve) => child.on('close', resolve));
    await call(local.server.url, 'DELETE', '/_local/faults', local.server.adminToken);
    expect(code).toBe(1);
    const id = /svc: The key made for the command, (key_\w+), could not be revoked/.exec(stdout)?.[1];
    expect(id, stdout).toBeDefined();
    expect(stdout).toContain(`svc: It works until`);
    expect((await svc(['keys', 'revoke', '--yes', id!], local.env)).exitCode).toBe(0);
  });

  it('a reader of stdout that goes away (| head -1) leaves the command its stderr', async () => {
    const script = 'echo one; echo two; sleep 0.3; echo three; echo "stderr still here" >&2';
    const child = spawn('sh', ['-c', `"$0" "$1" run -- sh -c '${script}' | head -1`, process.execPath, SVC_BIN], {
      env: cleanEnv(local.env) as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    await new Promise((resolve) => child.on('close', resolve));
    expect(stdout).toBe('one\n');
    expect(stderr).toContain('stderr still here');
  });
});

describe('what the command leaves behind', () => {
  it('a child that moved to a process group of its own, still in the job\'s session, ends with the job', async () => {
    const pidFile = join(dir, 'stray.pid');
    const stray = `python3 -c 'import os, time; os.setpgid(0, 0); open("${pidFile}", "w").write(str(os.getpid())); time.sleep(300)' & while [ ! -s ${pidFile} ]; do sleep 0.05; done`;
    // The built svc: in-process, the drain of output a leftover holds open waits on a schedule that never fires.
    const result = await svcProcess(['run', '--ephemeral', '--grace', '1s', '--', 'sh', '-c', stray], local.env);
    expect(result.exitCode, result.stderr).toBe(0);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await expect.poll(() => alive(pid)).toBe(false);
  });

  it('a signal to svc says the grace the command has', async () => {
    const file = probeFile();
    const run = spawned(['--ephemeral', '--grace', '1s', '--', 'node', PROBE, file.path, 'wait']);
    run.signalOn('stdout', 'ready', 'SIGTERM');
    const result = await run.child;
    expect(result.signal, result.stderr).toBe('SIGTERM');
    expect(result.stderr).toContain('SIGTERM: passed on to the command, which has 1 s to end before it is killed and its key revoked (a second signal kills it now).');
  });
});
