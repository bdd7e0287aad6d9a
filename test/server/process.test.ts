/**
 * `svc serve --local` as a real child process, from the built bin (the
 * suite runs after `npm run build`): persistence across SIGKILL, restart,
 * graceful shutdown, start-up failures.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LocalServerReady } from '../../src/contract/types.js';
import { parseResponse } from './helpers.js';
import { connect } from 'node:net';

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
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
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
  const child = svc(['serve', '--local', '--json', '--port', '0', ...args], env);
  await until(() => child.stdout().includes('\n'), 'the ready line', child);
  return { child, ready: JSON.parse(child.stdout()) };
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
    expect(banner).toContain(`export SVC_BASE_URL=${url}`);
    expect(banner).toContain(`export SVC_API_KEY=${key}`);
    expect(banner).toContain('svc keys list');
    expect(banner).toContain('svc status');
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

    const text = readFileSync(file, 'utf8');
    const saved = JSON.parse(text);
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
    const after = JSON.parse(readFileSync(file, 'utf8'));
    const used = after.keys.find((k: { id: string }) => k.id === acknowledged[0]!.id);
    expect(used.lastUsedAt).not.toBeNull();
  });

  it('refuses a corrupt file with a clear message and leaves it byte-identical', async () => {
    const file = join(dir, 'corrupt.json');
    const original = Buffer.from('{"format":"svc-local-state","version":1,"users":[{"id":');
    writeFileSync(file, original);
    const child = svc(['serve', '--local', '--json', '--port', '0', '--data', file]);
    expect((await child.exited).code).toBe(1);
    expect(child.stdout()).toBe('');
    expect(child.stderr()).toContain(`${file} is not valid JSON`);
    expect(child.stderr()).toContain('left untouched');
    expect(child.stderr()).not.toMatch(/\n\s+at /);
    expect(readFileSync(file).equals(original)).toBe(true);
  });

  it('on SIGTERM finishes the request in flight, saves it, and exits 0', async () => {
    const file = join(dir, 'graceful.json');
    const { child, ready } = await serve(['--data', file]);
    const { port } = new URL(ready.url);
    const body = JSON.stringify({ name: 'in-flight' });
    const socket = connect(Number(port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk));
    socket.write(
      `POST /api/service/user/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ready.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await new Promise((r) => setTimeout(r, 200));
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
    const saved = JSON.parse(readFileSync(file, 'utf8'));
    expect(saved.keys.map((k: { id: string }) => k.id)).toContain(created.id);
  });
});
