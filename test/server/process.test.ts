// tier: process
/**
 * `svc serve --local` as a real child process, from the built bin (the
 * suite runs after `npm run build`): persistence across SIGKILL, restart,
 * graceful shutdown, start-up failures.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LocalServerReady } from '../../src/contract/types.js';
import { homeEnv } from '../helpers/home.js';
import { serveProcess } from '../helpers/reference-server.mjs';
import { parseResponse } from './helpers.js';
import { connect } from 'node:net';
import { savedBytes, savedState } from '../helpers/saved-state.js';

const BIN = resolve(import.meta.dirname, '../../bin/svc.js');
const BUILT = resolve(import.meta.dirname, '../../dist/main.js');

let dir: string;
beforeAll(() => {
  if (!existsSync(BUILT)) throw new Error('dist/main.js is missing: run `npm run build` before these tests');
  dir = mkdtempSync(join(tmpdir(), 'svc-serve-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Child {
  process: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

function svc(args: string[], env: Record<string, string> = {}): Child {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', ...homeEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  child.stderr!.on('data', (chunk) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on('exit', (code, signal) => done({ code, signal })),
  );
  return { process: child, stdout: () => out, stderr: () => err, exited };
}

async function until(check: () => boolean, what: string, child: Child): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (child.process.exitCode !== null) throw new Error(`svc exited before ${what}: ${child.stderr()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${child.stderr()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function serve(args: string[], env: Record<string, string> = {}): Promise<{ child: Child; ready: LocalServerReady }> {
  const server = await serveProcess(args, { env: { PATH: process.env.PATH ?? '', ...homeEnv(), ...env } });
  children.push(server.child);
  return { child: { process: server.child, stdout: server.stdout, stderr: server.stderr, exited: server.exited }, ready: server.ready };
}

async function call(url: string, method: string, path: string, key: string, body?: unknown) {
  const res = await request(`${url}${path}`, {
    method: method as 'GET',
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? JSON.parse(text) : undefined };
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** True when `text` holds the secret, or either half of its 64 random characters (a truncated leak is still a leak). */
function leaks(text: string, secret: string): boolean {
  return text.includes(secret.slice(3, 35)) || text.includes(secret.slice(35));
}

/** A CLI command run to completion with only `env` (and PATH, HOME) in its environment. */
async function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = svc(args, env);
  const { code } = await child.exited;
  return { code, stdout: child.stdout(), stderr: child.stderr() };
}

describe('svc serve --local', () => {
  it('prints exactly one JSON ready line, and exits 0 on SIGTERM', async () => {
    const { child, ready } = await serve(['--plan', 'creator'], { SVC_LOCAL_ADMIN_TOKEN: 'from-env' });
    expect(ready).toEqual({
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      apiKey: expect.stringMatching(/^sk_[A-Za-z0-9]{64}$/),
      adminToken: 'from-env',
      userId: expect.stringMatching(/^usr_/),
      workspaceId: expect.stringMatching(/^ws_/),
      plan: 'creator',
    });
    expect((await call(ready.url, 'GET', '/api/service/workspace', ready.apiKey!)).json.plan).toBe('creator');
    child.process.kill('SIGTERM');
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(child.stdout().trimEnd().split('\n')).toHaveLength(1);
  });

  it('prints a banner on stderr without --json: URL, key and what to run next', async () => {
    const child = svc(['serve', '--local', '--port', '0', '--admin-token', 'tok']);
    await until(() => child.stderr().includes('Ctrl-C'), 'the banner', child);
    const banner = child.stderr();
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(banner)![1];
    const key = /(sk_[A-Za-z0-9]{64})/.exec(banner)![1];
    expect(banner).toMatch(new RegExp(`^ {2}node \\S*bin/svc\\.js login --with-key --base-url ${url}$`, 'm'));
    expect(banner.split(key!)).toHaveLength(2);
    // Run as `node …/bin/svc.js`, svc is no command on the PATH: the next steps say how it was run.
    expect(banner).toMatch(/^ {2}node \S*bin\/svc\.js keys list$/m);
    expect(banner).toMatch(/^ {2}node \S*bin\/svc\.js status$/m);
    expect(banner).not.toContain('\x1b[');
    expect(child.stdout()).toBe('');
    expect((await call(url!, 'GET', '/_local/clock', 'tok')).status).toBe(200);
    child.process.kill('SIGINT');
    expect((await child.exited).code).toBe(0);
  });

  it('warns that a non-loopback address is reachable without TLS', async () => {
    const { child } = await serve(['--host', '0.0.0.0']);
    expect(child.stderr()).toMatch(/no TLS.*reachable from the network/);
    child.process.kill('SIGTERM');
    expect((await child.exited).code).toBe(0);
  });

  it('is a usage error without --local', async () => {
    const child = svc(['serve']);
    expect((await child.exited).code).toBe(2);
    expect(child.stderr()).toContain('--local');
  });

  it('fails with one clear line when the port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const child = svc(['serve', '--local', '--port', String(port)]);
      expect((await child.exited).code).toBe(1);
      expect(child.stderr()).toContain(`cannot listen on 127.0.0.1:${port}: the address is already in use`);
      expect(child.stderr()).not.toMatch(/\n\s+at /);
    } finally {
      blocker.close();
    }
  });
});

describe('svc serve --local --data', () => {
  it('keeps every acknowledged key through a SIGKILL in the middle of a stream of creates', async () => {
    const file = join(dir, 'killed.json');
    const { child, ready } = await serve(['--plan', 'pro', '--data', file]);
    const acknowledged: { id: string; secret: string }[] = [];
    let killed = false;

    const worker = async () => {
      for (let i = 0; !killed; i++) {
        try {
          const res = await call(ready.url, 'POST', '/api/service/user/api-keys', ready.apiKey!, { name: `stream-${i}` });
          if (res.status === 201) acknowledged.push({ id: res.json.id, secret: res.json.secret });
          else throw new Error(`unexpected ${res.status}`);
        } catch (error) {
          if (!killed) throw error;
        }
        if (acknowledged.length >= 120 && !killed) {
          killed = true;
          child.process.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 12 }, worker));
    expect((await child.exited).signal).toBe('SIGKILL');
    expect(acknowledged.length).toBeGreaterThanOrEqual(120);

    const text = savedBytes(file);
    const saved = await savedState(file);
    const hashes = new Set(saved.keys.map((k: { hash: string }) => k.hash));
    const ids = new Set(saved.keys.map((k: { id: string }) => k.id));
    for (const { id, secret } of acknowledged) {
      expect(ids.has(id), id).toBe(true);
      expect(hashes.has(sha256(secret)), id).toBe(true);
    }
    expect(hashes.has(sha256(ready.apiKey!))).toBe(true);
    for (const secret of [ready.apiKey!, ...acknowledged.map((a) => a.secret)]) {
      expect(text).not.toContain(secret.slice(3));
    }

    // A restart loads it: --plan is ignored, no plaintext to show, and every key still works.
    const again = await serve(['--plan', 'free', '--data', file]);
    expect(again.ready).toMatchObject({ apiKey: null, plan: 'pro', userId: ready.userId, workspaceId: ready.workspaceId });
    const list = await call(again.ready.url, 'GET', '/api/service/user/api-keys', ready.apiKey!);
    expect(list.status).toBe(200);
    const listed = new Set(list.json.keys.map((k: { id: string }) => k.id));
    for (const { id } of acknowledged) expect(listed.has(id)).toBe(true);
    const answers = await Promise.all(
      acknowledged.map(({ secret }) => call(again.ready.url, 'GET', '/api/service/workspace', secret)),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    again.child.process.kill('SIGTERM');
    expect((await again.child.exited).code).toBe(0);
    // lastUsedAt is saved lazily, at the latest on shutdown.
    const after = await savedState(file);
    const used = after.keys.find((k: { id: string }) => k.id === acknowledged[0]!.id);
    expect(used.lastUsedAt).not.toBeNull();
  });

  it('keeps every acknowledged create, disable, enable and revoke through a SIGKILL in a mixed write storm', async () => {
    const file = join(dir, 'storm.json');
    const first = await serve(['--plan', 'pro', '--data', file]);
    const { url, apiKey } = first.ready;

    type State = 'enabled' | 'disabled' | 'revoked';
    /** What the server acknowledged for a key, and the change in flight when the server died, if any. */
    interface Tracked {
      id: string;
      secret: string;
      acked: State;
      pending: State | null;
    }
    const keys: Tracked[] = [];
    const acked = { create: 0, disable: 0, enable: 0, revoke: 0 };
    let killed = false;

    const mutate = async (key: Tracked, to: State) => {
      key.pending = to;
      const res =
        to === 'revoked'
          ? await call(url, 'DELETE', `/api/service/user/api-keys/${key.id}`, apiKey!)
          : await call(url, 'PATCH', `/api/service/user/api-keys/${key.id}`, apiKey!, { enabled: to === 'enabled' });
      if (res.status !== 200) throw new Error(`${to} answered ${res.status}`);
      key.acked = to;
      key.pending = null;
      acked[to === 'revoked' ? 'revoke' : to === 'enabled' ? 'enable' : 'disable']++;
    };

    // Each worker changes only keys it created, so no two requests in flight touch one key.
    const worker = async (w: number) => {
      const mine: Tracked[] = [];
      for (let i = 0; !killed; i++) {
        try {
          const live = mine.filter((k) => k.acked !== 'revoked');
          const step = i % 5;
          if (step === 2 && live.some((k) => k.acked === 'enabled')) {
            await mutate(live.find((k) => k.acked === 'enabled')!, 'disabled');
          } else if (step === 3 && live.some((k) => k.acked === 'disabled')) {
            const disabled = live.filter((k) => k.acked === 'disabled');
            // Some disabled keys come back, others are revoked while disabled.
            await mutate(disabled[0]!, i % 2 === 0 ? 'enabled' : 'revoked');
          } else if (step === 4 && live.length > 1) {
            await mutate(live[0]!, 'revoked');
          } else {
            const res = await call(url, 'POST', '/api/service/user/api-keys', apiKey!, { name: `storm-${w}-${i}` });
            if (res.status !== 201) throw new Error(`create answered ${res.status}`);
            const key: Tracked = { id: res.json.id, secret: res.json.secret, acked: 'enabled', pending: null };
            mine.push(key);
            keys.push(key);
            acked.create++;
          }
        } catch (error) {
          if (!killed) throw error;
        }
        const total = acked.create + acked.disable + acked.enable + acked.revoke;
        if (!killed && total >= 200 && acked.disable >= 20 && acked.revoke >= 20 && acked.enable >= 5) {
          killed = true;
          first.child.process.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 10 }, (_, w) => worker(w)));
    expect((await first.child.exited).signal).toBe('SIGKILL');

    /** The states a key may be found in: what was acknowledged, or the change in flight (it may have been saved). */
    const allowed = (key: Tracked): State[] => (key.pending ? [key.acked, key.pending] : [key.acked]);

    // The file on disk, as the kill left it.
    const text = savedBytes(file);
    const saved = new Map<string, { hash: string; enabled: boolean }>((await savedState(file)).keys.map((k: { id: string }) => [k.id, k]));
    for (const key of keys) {
      const found = saved.get(key.id);
      const state: State = !found ? 'revoked' : found.enabled ? 'enabled' : 'disabled';
      expect(allowed(key), `${key.id} is ${state} in the file`).toContain(state);
      if (found) expect(found.hash).toBe(sha256(key.secret));
    }

    // A restart loads it, and the server agrees with the file through the API.
    const second = await serve(['--data', file]);
    expect(second.ready.apiKey).toBeNull();
    const list = await call(second.ready.url, 'GET', '/api/service/user/api-keys', apiKey!);
    expect(list.status).toBe(200);
    const listed = new Map<string, { status: string }>(list.json.keys.map((k: { id: string }) => [k.id, k]));
    const uses = await Promise.all(keys.map((k) => call(second.ready.url, 'GET', '/api/service/workspace', k.secret)));
    keys.forEach((key, i) => {
      const record = listed.get(key.id);
      const state: State = !record ? 'revoked' : (record.status as State);
      expect(allowed(key), `${key.id} is ${state} after restart`).toContain(state);
      expect(uses[i]!.status, `${key.id} (${state}) authenticating`).toBe(state === 'enabled' ? 200 : 401);
    });

    // No plaintext secret in the file, nor in anything either server printed. The bootstrap key's
    // plaintext is printed once by design, in the first ready line, and nowhere else.
    const secrets = [apiKey!, ...keys.map((k) => k.secret)];
    const after = savedBytes(file);
    const printed = [first.child.stdout().replace(JSON.stringify(first.ready), ''), first.child.stderr(), second.child.stdout(), second.child.stderr()];
    for (const secret of secrets) {
      for (const where of [text, after, ...printed]) expect(leaks(where, secret)).toBe(false);
    }
    expect(first.child.stdout().trim()).toBe(JSON.stringify(first.ready));

    // --verbose logs every request the CLI makes, and still never a secret.
    const config = mkdtempSync(join(dir, 'config-'));
    const env = { SVC_API_KEY: apiKey!, SVC_BASE_URL: second.ready.url, SVC_CONFIG_DIR: config };
    const survivor = keys.find((k) => k.acked === 'enabled' && k.pending === null)!;
    const runs = [
      await run(['--verbose', 'keys', 'list', '--json'], env),
      await run(['--verbose', 'keys', 'create', 'verbose-check', '--json'], env),
      await run(['--verbose', 'keys', 'disable', survivor.id], env),
      await run(['--verbose', 'keys', 'revoke', survivor.id, '--yes'], env),
    ];
    const created = JSON.parse(runs[1]!.stdout).key.secret as string;
    for (const [i, { code, stdout, stderr }] of runs.entries()) {
      expect(code, stderr).toBe(0);
      expect(stderr).toContain(second.ready.url);
      for (const secret of [...secrets, created]) {
        expect(leaks(stderr, secret), `stderr of run ${i}`).toBe(false);
        // keys create --json prints its one new secret on stdout, by design; nothing else may.
        if (!(i === 1 && secret === created)) expect(leaks(stdout, secret), `stdout of run ${i}`).toBe(false);
      }
    }
    expect(leaks(savedBytes(file), created)).toBe(false);
    second.child.process.kill('SIGTERM');
    expect((await second.child.exited).code).toBe(0);
    expect(leaks(savedBytes(file), created)).toBe(false);
  });

  it('refuses a corrupt file with a clear message and leaves it byte-identical', async () => {
    const file = join(dir, 'corrupt.json');
    const original = Buffer.from('{"format":"svc-local-state","version":1,"users":[{"id":');
    writeFileSync(file, original);
    const child = svc(['serve', '--local', '--json', '--port', '0', '--data', file]);
    expect((await child.exited).code).toBe(1);
    // --json: the failure's one document on stdout (docs/cli-error.schema.json), the message on stderr.
    expect(JSON.parse(child.stdout()).error).toMatchObject({ exitCode: 1 });
    expect(child.stderr()).toContain(`${file} is not valid JSON`);
    expect(child.stderr()).toContain('left untouched');
    expect(child.stderr()).not.toMatch(/\n\s+at /);
    expect(readFileSync(file).equals(original)).toBe(true);
  });

  // Ids of the shape the server makes: the loader refuses any other.
  const userId = `usr_${'a'.repeat(20)}`;
  const workspaceId = `ws_${'a'.repeat(20)}`;
  const keyId = (i: number) => `key_${String(i).repeat(20)}`;
  const validState = () => ({
    format: 'svc-local-state',
    version: 1,
    users: [{ id: userId, name: 'A', activeWorkspaceId: workspaceId, workspaceIds: [workspaceId] }],
    workspaces: [{ id: workspaceId, name: 'Personal', plan: 'free' }],
    keys: [0, 1].map((i) => ({
      id: keyId(i),
      userId,
      workspaceId,
      name: `k${i}`,
      hash: sha256(`secret-${i}`),
      hint: 'sk_abcd\u2026wxyz',
      enabled: true,
      createdAt: '2026-01-01T00:00:00.000Z',
      expiresAt: null,
      lastUsedAt: null,
    })),
  });
  it.each([
    ['an empty file', () => Buffer.alloc(0), 'is not valid JSON'],
    ['bytes that are not UTF-8', () => Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), 'is not valid JSON'],
    ['a key whose hash is not a SHA-256 digest', () => {
      const state = validState();
      state.keys[1]!.hash = 'sk_this-looks-like-a-plaintext-key';
      return Buffer.from(JSON.stringify(state));
    }, `keys[1] (${keyId(1)}): "hash" is not a SHA-256 hex digest`],
    ['two keys with one id', () => {
      const state = validState();
      state.keys[1]!.id = keyId(0);
      return Buffer.from(JSON.stringify(state));
    }, 'two keys share an id'],
    ['a key of an unknown user', () => {
      const state = validState();
      state.keys[0]!.userId = 'usr_gone';
      return Buffer.from(JSON.stringify(state));
    }, `keys[0] (${keyId(0)}): "userId" names an unknown user`],
    // Records the API would have refused: the loader refuses them too, naming the file and the record.
    ['a key with an empty name', () => {
      const state = validState();
      state.keys[1]!.name = '';
      return Buffer.from(JSON.stringify(state));
    }, `not a valid svc state file: keys[1] (${keyId(1)}): "name" must be 1 to 100 characters after trimming`],
    ['a key whose name holds an escape character', () => {
      const state = validState();
      state.keys[0]!.name = 'k\u001b[2Jx';
      return Buffer.from(JSON.stringify(state));
    }, `not a valid svc state file: keys[0] (${keyId(0)}): "name" must not contain control characters`],
  ])('refuses %s, names the problem, and leaves the file and its directory as they were', async (_, bytes, problem) => {
    const own = mkdtempSync(join(dir, 'refused-'));
    const file = join(own, 'state.json');
    const original = bytes();
    writeFileSync(file, original, { mode: 0o600 });
    const before = statSync(file);
    const child = svc(['serve', '--local', '--json', '--port', '0', '--data', file]);
    expect((await child.exited).code).toBe(1);
    expect(JSON.parse(child.stdout()).error).toMatchObject({ exitCode: 1 });
    expect(child.stderr()).toContain(`${file} is not`);
    expect(child.stderr()).toContain(problem);
    expect(child.stderr()).toContain('left untouched');
    expect(readFileSync(file).equals(original)).toBe(true);
    expect(statSync(file).mtimeMs).toBe(before.mtimeMs);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(own)).toEqual(['state.json']);
  });

  it('with the reader of its output gone (a pipe to a tee that was stopped), still shuts down cleanly on SIGTERM', async () => {
    const file = join(dir, 'reader-gone.json');
    const child = svc(['serve', '--local', '--port', '0', '--data', file]);
    await until(() => child.stderr().includes('Ctrl-C stops the server.'), 'the banner', child);
    // Ctrl-C in a terminal stops `svc serve | tee log` and the tee alike: the server's "finishing…" then meets a closed pipe.
    child.process.stdout!.destroy();
    child.process.stderr!.destroy();
    child.process.kill('SIGTERM');
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(readdirSync(dir).filter((name) => name.startsWith('reader-gone.json'))).toEqual(['reader-gone.json']);
  });

  it('on SIGTERM finishes the request in flight, saves it, and exits 0', async () => {
    const file = join(dir, 'graceful.json');
    const { child, ready } = await serve(['--data', file]);
    const { port } = new URL(ready.url);
    // A rule that changes nothing and is used up when the create reaches it, past authentication.
    await call(ready.url, 'POST', '/_local/faults', ready.adminToken, { rules: [{ method: 'POST', then: 'answer' }] });
    const body = JSON.stringify({ name: 'in-flight' });
    const socket = connect(Number(port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk));
    socket.write(
      `POST /api/service/user/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ready.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await expect.poll(async () => (await call(ready.url, 'GET', '/_local/faults', ready.adminToken)).json.rules).toEqual([]);
    child.process.kill('SIGTERM');
    await until(() => child.stderr().includes('SIGTERM'), 'shutdown to begin', child);
    // No new connections once shutdown began.
    await expect(request(`${ready.url}/api/service/workspace`)).rejects.toThrow();
    socket.write(body.slice(5));

    await until(() => parseResponse(received, false) !== null, 'the in-flight answer', child).catch(() => {});
    const answer = parseResponse(received, true)!;
    expect(answer.status).toBe(201);
    const created = JSON.parse(answer.body);
    expect(await child.exited).toEqual({ code: 0, signal: null });
    socket.destroy();
    const saved = await savedState(file);
    expect(saved.keys.map((k: { id: string }) => k.id)).toContain(created.id);
  });
});
