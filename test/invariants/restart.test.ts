// tier: in-process
/**
 * A reference server that ran without --data forgets every key when it
 * stops (issue 25, 5 and 9): it names each run in Svc-Server-Instance,
 * `svc login` records the run, and a 401 from another in-memory run says
 * the server was restarted and its keys are gone. Without a recorded run
 * (an older profile, SVC_API_KEY) svc cannot tell a restart from a key
 * disabled on the same run, and says nothing of one (issue 39, 6).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startLocalServer, svc, tempConfigDir, type LocalServer } from '../helpers/in-process.js';

const RESTARTED = 'The local server was restarted without --data; its keys are gone: `svc login` with the API key its banner printed.';
/** What svc said of every 401 from a loopback address before it could tell runs apart: a disabled key was told to look for a restart. */
const HEURISTIC = /forgot every key|restarted/;
const OTHER_RUN =
  'The server was restarted since this key was saved, with other state (another --data file, or none before): it does not hold the keys of the run before.';

const config = tempConfigDir();
const dir = mkdtempSync(join(tmpdir(), 'svc-restart-'));
let server: LocalServer | undefined;

afterAll(() => {
  config.remove();
  rmSync(dir, { recursive: true, force: true });
});

afterEach(async () => {
  await server?.stop();
  server = undefined;
  rmSync(join(config.dir, 'config.json'), { force: true });
});

const env = () => ({ SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: server!.url });
const savedProfile = () => JSON.parse(readFileSync(join(config.dir, 'config.json'), 'utf8')).profiles.default;

async function restart(options: { dataFile?: string } = {}): Promise<void> {
  const port = Number(new URL(server!.url).port);
  await server!.stop();
  server = await startLocalServer({ port, ...options });
}

describe('after an in-memory reference server restarts', () => {
  it('svc login records the run; the saved key’s 401 from a new run says the server was restarted, exit 3, and the new banner’s key works', async () => {
    server = await startLocalServer();
    expect((await svc(['login', '--with-key'], env(), { input: server.apiKey! })).exitCode).toBe(0);
    expect(savedProfile().serverInstance).toMatch(/^mem-[0-9a-f]{16}$/);
    await restart();
    const result = await svc(['keys', 'list'], env());
    expect(result.exitCode).toBe(3);
    const lines = result.stderr.split('\n');
    expect(lines[0]).toMatch(/^error: Authentication failed \(401\): /);
    expect(lines[1]).toBe(RESTARTED);
    expect(result.stderr).not.toMatch(/forgot every key/);
    expect((await svc(['login', '--with-key'], env(), { input: server.apiKey! })).exitCode).toBe(0);
    expect((await svc(['keys', 'list'], env())).exitCode).toBe(0);
  });

  it('a profile saved without a run (an older svc) is told nothing of a restart svc cannot see', async () => {
    server = await startLocalServer();
    expect((await svc(['login', '--with-key'], env(), { input: server.apiKey! })).exitCode).toBe(0);
    const file = JSON.parse(readFileSync(join(config.dir, 'config.json'), 'utf8'));
    delete file.profiles.default.serverInstance;
    writeFileSync(join(config.dir, 'config.json'), JSON.stringify(file), { mode: 0o600 });
    await restart();
    const result = await svc(['keys', 'list'], env());
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain('The key is unknown, disabled, expired or revoked.');
    expect(result.stderr).not.toMatch(HEURISTIC);
  });

  it('a key from SVC_API_KEY, which no login recorded, is told nothing of a restart', async () => {
    server = await startLocalServer();
    const key = server.apiKey!;
    await restart();
    const result = await svc(['keys', 'list'], { ...env(), SVC_API_KEY: key });
    expect(result.exitCode).toBe(3);
    expect(result.stderr).not.toMatch(HEURISTIC);
  });
});

describe('a disabled SVC_API_KEY on a server that never restarted', () => {
  it('is told the key was refused, not that the server may have restarted', async () => {
    server = await startLocalServer();
    const { id, secret } = JSON.parse((await svc(['keys', 'create', 'ci', '--json'], { ...env(), SVC_API_KEY: server.apiKey! })).stdout).key;
    expect((await svc(['keys', 'disable', id], { ...env(), SVC_API_KEY: server.apiKey! })).exitCode).toBe(0);
    const result = await svc(['keys', 'list'], { ...env(), SVC_API_KEY: secret });
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain('The key is unknown, disabled, expired or revoked.');
    expect(result.stderr).not.toMatch(HEURISTIC);
  });
});

describe('a saved key answered by a --data server of other state', () => {
  it('says the server was restarted with other state', async () => {
    server = await startLocalServer();
    expect((await svc(['login', '--with-key'], env(), { input: server.apiKey! })).exitCode).toBe(0);
    await restart({ dataFile: join(dir, 'other.json') });
    const result = await svc(['keys', 'list'], env());
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain(OTHER_RUN);
    expect(result.stderr).not.toContain(RESTARTED);
  });
});

describe('a 401 from the run the key was saved with', () => {
  it('says nothing of a restart: the key itself was revoked', async () => {
    server = await startLocalServer();
    expect((await svc(['login', '--with-key'], env(), { input: server.apiKey! })).exitCode).toBe(0);
    const { id } = JSON.parse((await svc(['keys', 'list', '--json'], env())).stdout).keys[0];
    await svc(['keys', 'revoke', id, '--yes'], env());
    const result = await svc(['keys', 'list'], env());
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain('The key is unknown, disabled, expired or revoked.');
    expect(result.stderr).not.toMatch(HEURISTIC);
    expect(result.stderr).not.toContain(RESTARTED);
  });

  it('a server with --data is the same run after a restart: its keys are kept, and a 401 says nothing of a restart', async () => {
    const dataFile = join(dir, 'state.json');
    server = await startLocalServer({ dataFile });
    expect((await svc(['login', '--with-key'], env(), { input: server.apiKey! })).exitCode).toBe(0);
    const recorded = savedProfile().serverInstance;
    expect(recorded).toMatch(/^data-[0-9a-f]{16}$/);
    const bootstrap = server.apiKey!;
    const { id, secret } = JSON.parse((await svc(['keys', 'create', 'doomed', '--json'], env())).stdout).key;
    expect((await svc(['login', '--with-key'], env(), { input: secret })).exitCode).toBe(0);
    await restart({ dataFile });
    expect((await fetch(`${server!.url}/api/service/workspace`)).headers.get('svc-server-instance')).toBe(recorded);
    expect((await svc(['keys', 'list'], env())).exitCode).toBe(0);
    expect((await svc(['keys', 'revoke', id, '--yes'], { ...env(), SVC_API_KEY: bootstrap })).exitCode).toBe(0);
    const result = await svc(['keys', 'list'], env());
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain('The key is unknown, disabled, expired or revoked.');
    expect(result.stderr).not.toMatch(HEURISTIC);
    expect(result.stderr).not.toContain(RESTARTED);
  });
});
