// tier: process
/**
 * A server that loses its lock (docs/contract.md §B): the lock file removed or
 * replaced under it, or its directory swapped for another. It must stop
 * making changes (503, undone in memory), go on answering reads, say why
 * once on stderr and exit non-zero, so that a second server on the same
 * file never has its saves overwritten, nor loses what the first one acknowledged.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LockLostError, startServer, type RunningServer } from '../../src/server/listen.js';
import { call, startServe, type Answer, type ServeProcess } from '../abuse/helpers.js';
import { savedBytes, savedState } from '../helpers/saved-state.js';

const dirs: string[] = [];
const running: (RunningServer | ServeProcess)[] = [];
afterEach(async () => {
  for (const server of running.splice(0)) await ('close' in server ? server.close().catch(() => {}) : server.stop());
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A data file in a directory of its own (`dir`), itself in a temp directory of this test's (`parent`). */
function dataFile(): { parent: string; dir: string; file: string } {
  const parent = mkdtempSync(join(tmpdir(), 'svc-lock-lost-'));
  dirs.push(parent);
  const dir = join(parent, 'data');
  mkdirSync(dir);
  return { parent, dir, file: join(dir, 'state.json') };
}

async function serve(file: string): Promise<ServeProcess> {
  const server = await startServe(['--data', file]);
  running.push(server);
  return server;
}

/** The server's exit, after SIGTERM. */
async function stop(server: ServeProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  running.splice(running.indexOf(server), 1);
  server.child.kill('SIGTERM');
  return server.exited;
}

const keysPath = '/api/service/user/api-keys';
const create = (url: string, key: string, name: string) => call(url, 'POST', keysPath, key, { name });

async function created(url: string, key: string, name: string): Promise<{ id: string; secret: string }> {
  const answer = await create(url, key, name);
  expect(answer.status, answer.text).toBe(201);
  return answer.json;
}

/** The key names the server lists, newest first: a read, which must go on whatever became of the lock. */
async function names(url: string, key: string): Promise<string[]> {
  const list = await call(url, 'GET', keysPath, key);
  expect(list.status, list.text).toBe(200);
  return list.json.keys.map((k: { name: string }) => k.name);
}

function expectLockLost(answer: Answer): void {
  expect(answer.status, answer.text).toBe(503);
  expect(answer.json).toEqual({ error: expect.stringContaining('lost the lock on its data file'), code: 'UNAVAILABLE' });
}

const lockOf = (pid: number) => new RegExp(`^${pid} [0-9a-f]{32}\\n$`);
const count = (text: string, part: string) => text.split(part).length - 1;

describe('svc serve --data after its lock is gone', () => {
  it('lock file removed: the next change is refused and undone, reads go on, stderr says why once, exit 1; a restart has every acknowledged change', async () => {
    const { file } = dataFile();
    const a = await serve(file);
    const kept = await created(a.url, a.apiKey, 'kept');
    rmSync(`${file}.lock`);

    expectLockLost(await create(a.url, a.apiKey, 'refused'));
    expectLockLost(await call(a.url, 'PATCH', `${keysPath}/${kept.id}`, a.apiKey, { enabled: false }));
    expectLockLost(await call(a.url, 'DELETE', `${keysPath}/${kept.id}`, a.apiKey));
    expect(await names(a.url, a.apiKey)).toEqual(['kept', 'bootstrap']);
    expect((await call(a.url, 'GET', `${keysPath}/${kept.id}`, a.apiKey)).json.status).toBe('enabled');
    expect((await call(a.url, 'GET', '/api/service/workspace', kept.secret)).status).toBe(200);
    // Polled: stderr and the answers come through different pipes, and may be read in either order.
    await expect.poll(() => a.stderr()).toContain(`lost the lock on ${file}: ${file}.lock was removed.`);
    expect(count(a.stderr(), 'lost the lock')).toBe(1);
    expect(existsSync(`${file}.lock`)).toBe(false);

    expect(await stop(a)).toEqual({ code: 1, signal: null });
    await expect.poll(() => a.stderr()).toContain(`stopped without the lock on ${file}: ${file}.lock was removed`);
    expect(a.stderr()).not.toMatch(/\n\s+at /);
    expect(a.stderr()).not.toContain('Unexpected error');
    // It did not put a lock back on its way out, nor save what it refused.
    expect(existsSync(`${file}.lock`)).toBe(false);
    expect(savedBytes(file)).not.toContain('"refused"');

    const b = await serve(file);
    expect(await names(b.url, a.apiKey)).toEqual(['kept', 'bootstrap']);
    expect((await call(b.url, 'GET', '/api/service/workspace', kept.secret)).status).toBe(200);
    expect(await stop(b)).toEqual({ code: 0, signal: null });
  });

  it('notices a removed lock by itself, with no change to save, and says so', async () => {
    const { file } = dataFile();
    const a = await serve(file);
    rmSync(`${file}.lock`);
    await expect.poll(() => a.stderr()).toContain(`${file}.lock was removed`);
    expectLockLost(await create(a.url, a.apiKey, 'refused'));
    expect(count(a.stderr(), 'lost the lock')).toBe(1);
    expect((await stop(a)).code).toBe(1);
  });

  it("lock replaced by another server's: the first refuses changes and exits 1 leaving the other's lock; the second keeps everything", async () => {
    const { file } = dataFile();
    const a = await serve(file);
    const kept = await created(a.url, a.apiKey, 'kept');
    rmSync(`${file}.lock`);
    // The second server starts as if the file were free, and loads what the first acknowledged.
    const b = await serve(file);
    expect(readFileSync(`${file}.lock`, 'utf8')).toMatch(lockOf(b.child.pid!));
    expect(await names(b.url, a.apiKey)).toEqual(['kept', 'bootstrap']);

    expectLockLost(await create(a.url, a.apiKey, 'refused'));
    expect(await names(a.url, a.apiKey)).toEqual(['kept', 'bootstrap']);
    // Which the first server saw depends on when its watch looked: the lock gone, or already the second's.
    const reasons = [`${file}.lock was removed`, `${file}.lock was replaced by the lock of pid ${b.child.pid}`];
    await expect.poll(() => reasons.find((reason) => a.stderr().includes(reason)) ?? a.stderr()).toBeOneOf(reasons);
    const fromB = await created(b.url, a.apiKey, 'from-b');

    expect((await stop(a)).code).toBe(1);
    expect(readFileSync(`${file}.lock`, 'utf8')).toMatch(lockOf(b.child.pid!));
    // What the first server still held in memory did not overwrite the second's save.
    expect(await names(b.url, a.apiKey)).toEqual(['from-b', 'kept', 'bootstrap']);
    expect(await stop(b)).toEqual({ code: 0, signal: null });

    const c = await serve(file);
    expect(await names(c.url, a.apiKey)).toEqual(['from-b', 'kept', 'bootstrap']);
    for (const { secret } of [kept, fromB]) expect((await call(c.url, 'GET', '/api/service/workspace', secret)).status).toBe(200);
  });

  it('directory moved away and a new one made in its place: changes refused, nothing written to the new one, exit 1; the moved file has every acknowledged change', async () => {
    const { parent, dir, file } = dataFile();
    const a = await serve(file);
    const kept = await created(a.url, a.apiKey, 'kept');
    const moved = join(parent, 'moved');
    renameSync(dir, moved);
    mkdirSync(dir);

    expectLockLost(await create(a.url, a.apiKey, 'refused'));
    expect(await names(a.url, a.apiKey)).toEqual(['kept', 'bootstrap']);
    await expect.poll(() => a.stderr()).toContain(`lost the lock on ${file}: its directory ${dir} was replaced by another one`);
    expect((await stop(a)).code).toBe(1);
    expect(readdirSync(dir)).toEqual([]);

    const b = await serve(join(moved, 'state.json'));
    expect(await names(b.url, a.apiKey)).toEqual(['kept', 'bootstrap']);
    expect((await call(b.url, 'GET', '/api/service/workspace', kept.secret)).status).toBe(200);
  });
});

describe('startServer after its lock is gone', () => {
  async function start(file: string, warnings: string[]): Promise<RunningServer> {
    const server = await startServer({ host: '127.0.0.1', port: 0, dataFile: file, logWarning: (message) => warnings.push(message) });
    running.push(server);
    return server;
  }

  it('directory removed and made again: changes refused, nothing written to the new one, and close rejects naming the directory', async () => {
    const { dir, file } = dataFile();
    const warnings: string[] = [];
    const a = await start(file, warnings);
    const key = a.ready.apiKey!;
    await created(a.url, key, 'kept');
    rmSync(dir, { recursive: true });
    mkdirSync(dir);

    expectLockLost(await create(a.url, key, 'refused'));
    expect(await names(a.url, key)).toEqual(['kept', 'bootstrap']);
    // The new directory may reuse the old one's inode; then what is missing is the lock in it.
    expect(warnings).toEqual([expect.stringContaining(`lost the lock on ${file}: `)]);
    expect(warnings[0]).toContain(dir);
    const closed = a.close();
    await expect(closed).rejects.toBeInstanceOf(LockLostError);
    await expect(closed).rejects.toThrow(`stopped without the lock on ${file}`);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('lock taken by a second server of the same process: the pid is the same, the token is not', async () => {
    const { file } = dataFile();
    const warnings: string[] = [];
    const a = await start(file, warnings);
    const key = a.ready.apiKey!;
    rmSync(`${file}.lock`);
    const b = await start(file, []);
    const fromB = await created(b.url, key, 'from-b');

    expectLockLost(await create(a.url, key, 'refused'));
    expect(warnings).toEqual([expect.stringContaining(`${file}.lock was replaced by the lock of pid ${process.pid}`)]);
    await expect(a.close()).rejects.toBeInstanceOf(LockLostError);
    // The first server's release leaves the second's lock alone.
    expect(readFileSync(`${file}.lock`, 'utf8')).toMatch(lockOf(process.pid));
    expect(await names(b.url, key)).toEqual(['from-b', 'bootstrap']);
    await b.close();
    expect(existsSync(`${file}.lock`)).toBe(false);
    expect((await savedState(file)).keys.map((k: { id: string }) => k.id)).toContain(fromB.id);
  });

  it('lock replaced by a copy of itself: the content is the same, the inode is not', async () => {
    const { file } = dataFile();
    const warnings: string[] = [];
    const a = await start(file, warnings);
    const content = readFileSync(`${file}.lock`);
    // Written beside it and renamed over, as cp and mv would: removed first, its inode number could come back.
    writeFileSync(`${file}.copy`, content);
    renameSync(`${file}.copy`, `${file}.lock`);

    expectLockLost(await create(a.url, a.ready.apiKey!, 'refused'));
    expect(warnings).toEqual([expect.stringContaining(`${file}.lock was replaced by a copy of it`)]);
    await expect(a.close()).rejects.toBeInstanceOf(LockLostError);
    // Not its own any more, so not removed either.
    expect(readFileSync(`${file}.lock`).equals(content)).toBe(true);
  });

  it('a refused save is undone like a failed one: a reset is refused whole, and the old world stays', async () => {
    const { file } = dataFile();
    const a = await start(file, []);
    const key = a.ready.apiKey!;
    const before = savedBytes(file);
    rmSync(`${file}.lock`);
    const reset = await call(a.url, 'POST', '/_local/reset', a.ready.adminToken);
    expectLockLost(reset);
    expect((await call(a.url, 'GET', '/api/service/workspace', key)).status).toBe(200);
    expect(savedBytes(file)).toBe(before);
  });
});
