import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll } from 'vitest';
import { request } from 'undici';
import type { LocalServerReady } from '../../src/contract/types.js';

export const SVC_BIN = resolve(import.meta.dirname, '../../bin/svc.js');

/** Environment with nothing inherited that could change svc's behaviour. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    SVC_API_KEY: undefined,
    SVC_BASE_URL: undefined,
    SVC_PROFILE: undefined,
    SVC_CONFIG_DIR: undefined,
    SVC_LOCAL_ADMIN_TOKEN: undefined,
    NO_COLOR: undefined,
    CI: undefined,
    ...extra,
  };
}

export interface LocalServer extends LocalServerReady {
  process: ResultPromise;
  stop(): Promise<void>;
}

/** A real `svc serve --local` on a free port, as users run it. */
export async function startLocalServer(args: string[] = []): Promise<LocalServer> {
  const child = execa('node', [SVC_BIN, 'serve', '--local', '--json', '--port', '0', ...args], {
    env: cleanEnv(),
    extendEnv: false,
    reject: false,
    buffer: false,
  });
  const ready = await new Promise<LocalServerReady>((resolvePromise, rejectPromise) => {
    let text = '';
    let errText = '';
    child.stderr!.on('data', (chunk) => (errText += String(chunk)));
    child.stdout!.on('data', (chunk) => {
      text += String(chunk);
      const line = text.split('\n')[0];
      if (text.includes('\n')) resolvePromise(JSON.parse(line!) as LocalServerReady);
    });
    child.once('exit', (code) => rejectPromise(new Error(`svc serve exited ${code} before it was ready: ${errText}`)));
  });
  return {
    ...ready,
    process: child,
    async stop() {
      child.kill('SIGTERM');
      await child;
    },
  };
}

/**
 * A reference server and a config dir for one test file. `env` points svc at
 * both, with the server's bootstrap key.
 */
export function useLocalServer(args: string[] = []) {
  const config = tempConfigDir();
  let running: LocalServer | undefined;
  beforeAll(async () => {
    running = await startLocalServer(args);
  });
  afterAll(async () => {
    await running?.stop();
    config.remove();
  });
  return {
    configDir: config.dir,
    get server(): LocalServer {
      if (!running) throw new Error('the local server is started in beforeAll');
      return running;
    },
    get env(): Record<string, string> {
      return { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: this.server.url, SVC_API_KEY: this.server.apiKey! };
    },
  };
}

/** A temporary SVC_CONFIG_DIR per test file. */
export function tempConfigDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-e2e-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs the built svc with no TTY, and no stdin unless `input` is given. */
export function svc(args: string[], env: Record<string, string | undefined>, options: { input?: string } = {}) {
  const stdin = options.input === undefined ? { stdin: 'ignore' as const } : { input: options.input };
  return execa('node', [SVC_BIN, ...args], {
    env: cleanEnv(env),
    extendEnv: false,
    reject: false,
    timeout: 30_000,
    ...stdin,
  });
}

/** A call to the reference server's own admin area (or the API with a key). */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; headers: Record<string, unknown>; json: any }> {
  const res = await request(baseUrl + path, {
    method: method as 'GET',
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, json: text ? JSON.parse(text) : null };
}

/** Moves the server clock so the current rate window ends in `seconds` (±1 s of real time). */
export async function windowEndsIn(server: { url: string; adminToken: string }, seconds: number): Promise<void> {
  const { json } = await call(server.url, 'GET', '/_local/clock', server.adminToken);
  const intoWindow = (Date.parse(json.now) / 1000) % 60;
  const left = 60 - intoWindow;
  const advance = left > seconds ? left - seconds : left + 60 - seconds;
  await call(server.url, 'POST', '/_local/clock', server.adminToken, { advanceSeconds: advance });
}
