// tier: process
/**
 * `svc serve --local --latency/--fail-rate` and the warning for a --plan an
 * existing --data file ignores: options only a real process shows (banner, stderr).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startServe, type ServeProcess } from '../abuse/helpers.js';
import { call, cleanEnv, SVC_BIN, svc, tempConfigDir } from '../helpers/cli.js';

const config = tempConfigDir();
const dir = mkdtempSync(join(tmpdir(), 'svc-serve-flags-'));
const running: ServeProcess[] = [];
afterAll(async () => {
  for (const server of running) await server.stop();
  config.remove();
  rmSync(dir, { recursive: true, force: true });
});

async function serve(args: string[]): Promise<ServeProcess> {
  const server = await startServe(args);
  running.push(server);
  return server;
}

const env = (server: ServeProcess) => ({ SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey });

async function logged(server: ServeProcess): Promise<{ path: string; status: number | null; ms: number; fault: string | null }[]> {
  return (await call(server.url, 'GET', '/_local/requests', ADMIN_TOKEN)).json.requests;
}

/**
 * Stderr is a pipe of its own: a line written before the ready line may be
 * read after it. Waits for the chunk that brings `text` (or the server's
 * end), not for a number of polls: on a loaded machine the line comes when
 * it comes, and the test's own timeout is the only limit.
 */
async function stderrOnceIn(server: ServeProcess, text: string): Promise<string> {
  const stream = server.child.stderr!;
  await new Promise<void>((resolve) => {
    const look = () => {
      if (!server.stderr().includes(text)) return;
      stream.off('data', look);
      resolve();
    };
    stream.on('data', look);
    stream.once('close', resolve);
    look();
  });
  return server.stderr();
}

/** The human banner of `svc serve --local` with `args`, read until it is complete, then the server stopped. */
async function banner(args: string[]): Promise<string> {
  const child = execa('node', [SVC_BIN, 'serve', '--local', '--port', '0', ...args], { env: cleanEnv(), extendEnv: false, reject: false });
  let text = '';
  await new Promise<void>((done) => {
    child.stderr!.on('data', (chunk) => {
      text += String(chunk);
      if (text.includes('Ctrl-C stops the server.')) done();
    });
    child.once('exit', () => done());
  });
  child.kill('SIGTERM');
  await child;
  return text;
}

describe('--fail-rate', () => {
  it('answers that share of API requests 502 or 503, logged as the flag; svc does not retry a create and says so', async () => {
    const server = await serve(['--fail-rate', '1']);
    expect(await stderrOnceIn(server, 'faults on')).toContain('faults on: 100% of API requests answered 502 or 503');
    // --max-wait 0: the look for a key the create may have made is one read, neither retried nor made again on a server that fails every one.
    const result = await svc(['keys', 'create', 'ci', '--max-wait', '0'], env(server));
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/\((502|503) UNAVAILABLE\)/);
    const log = await logged(server);
    expect(log.map((r) => r.path)).toEqual(['/api/service/user/api-keys', '/api/service/user/api-keys']);
    for (const entry of log) {
      expect([502, 503]).toContain(entry.status);
      expect(entry.fault).toBe('--fail-rate');
    }
    // The admin area is never failed.
    expect((await call(server.url, 'GET', '/_local/clock', ADMIN_TOKEN)).status).toBe(200);
  });
});

describe('--latency', () => {
  it('delays every API request by a fixed time', async () => {
    const server = await serve(['--latency', '300']);
    expect(await stderrOnceIn(server, 'faults on')).toContain('faults on: every API request delayed 300 ms');
    const started = performance.now();
    expect((await svc(['keys', 'list'], env(server))).exitCode).toBe(0);
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
    const [entry] = await logged(server);
    expect(entry!.status).toBe(200);
    expect(entry!.ms).toBeGreaterThanOrEqual(295);
    expect(entry!.fault).toBeNull();
  });

  it('delays by a random time within a range', async () => {
    const server = await serve(['--latency', '100-200']);
    for (let i = 0; i < 4; i++) await call(server.url, 'GET', '/api/service/workspace', server.apiKey);
    for (const entry of await logged(server)) {
      expect(entry.ms).toBeGreaterThanOrEqual(95);
      expect(entry.ms).toBeLessThan(1_000);
    }
  });
});

describe('the banner and bad values', () => {
  it('says the faults are on', async () => {
    const text = await banner(['--latency', '20-80', '--fail-rate', '0.05']);
    expect(text).toMatch(/faults\s+every API request delayed 20-80 ms; 5% of API requests answered 502 or 503 \(on purpose, for testing\)/);
    expect(await banner([])).not.toContain('faults');
  });

  it.each([
    ['--latency', '5-1'],
    ['--latency', 'fast'],
    ['--latency', '-5'],
    ['--latency', '1.5'],
    ['--fail-rate', '1.5'],
    ['--fail-rate', '-0.1'],
    ['--fail-rate', 'often'],
    ['--fail-rate', ''],
    ['--fail-rate', '0x1'],
    ['--fail-rate', '1e-1'],
  ])('refuses %s %j with exit 2', async (flag, value) => {
    const result = await svc(['serve', '--local', '--port', '0', flag, value], {});
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`option '${flag}`);
  });
});

describe('--plan with --data', () => {
  it('warns when an existing data file makes --plan meaningless, and only then', async () => {
    const file = join(dir, 'state.json');
    const first = await serve(['--data', file, '--plan', 'pro']);
    expect(first.plan).toBe('pro');
    await first.stop();
    expect(first.stderr()).not.toContain('--plan');

    const second = await serve(['--data', file, '--plan', 'free']);
    expect(second.plan).toBe('pro');
    expect(await stderrOnceIn(second, 'ignored')).toContain(`--plan free is ignored: ${file} already holds state, whose workspace is on plan pro.`);
    await second.stop();

    const third = await serve(['--data', file]);
    await third.stop();
    expect(third.stderr()).not.toContain('--plan');
  });
});
