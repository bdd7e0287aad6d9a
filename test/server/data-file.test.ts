// tier: process
/**
 * Start-up with --data (docs/contract.md §B): the directory must take files, one
 * server per data file (a lock naming the holder's pid, taken over when that
 * pid is dead), and temp files left by a crash are cleared.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, linkSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerStartError, startServer, type RunningServer } from '../../src/server/listen.js';
import { startServe, type ServeProcess } from '../abuse/helpers.js';
import { homeEnv } from '../helpers/home.js';
import { startTestServer } from './helpers.js';

const BIN = resolve(import.meta.dirname, '../../bin/svc.js');

const dirs: string[] = [];
const running: (RunningServer | ServeProcess)[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const server of running.splice(0)) await ('close' in server ? server.close() : server.stop());
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-data-file-'));
  dirs.push(dir);
  return join(dir, 'state.json');
}

/** What a lock says: its holder's pid, and a token of that holder's own. */
const lockOf = (pid: number) => new RegExp(`^${pid} [0-9a-f]{32}\\n$`);

async function start(file: string): Promise<RunningServer> {
  const server = await startServer({ host: '127.0.0.1', port: 0, dataFile: file });
  running.push(server);
  return server;
}

async function serve(file: string): Promise<ServeProcess> {
  const server = await startServe(['--data', file]);
  running.push(server);
  return server;
}

/** `svc serve --local --data file` run to its exit, for the starts that must fail. */
function refusedServe(file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--local', '--json', '--port', '0', '--data', file], {
    env: { PATH: process.env.PATH ?? '', ...homeEnv() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  return new Promise((done) => child.on('exit', (code) => done({ code, stdout, stderr })));
}

/** The pid of a process that ran and is gone. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((done) => child.on('exit', done));
  return child.pid!;
}

/** A live process that is not an svc server. */
function livePid(): number {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
  children.push(child);
  return child.pid!;
}

describe('one server per data file', () => {
  it('refuses a second server in the same process, naming the holder; the first keeps serving and, closed, frees the file', async () => {
    const file = dataFile();
    const first = await start(file);
    expect(readFileSync(`${file}.lock`, 'utf8')).toMatch(lockOf(process.pid));
    const second = startServer({ host: '127.0.0.1', port: 0, dataFile: file });
    await expect(second).rejects.toBeInstanceOf(ServerStartError);
    await expect(second).rejects.toThrow(`${file} is in use by another svc serve (pid ${process.pid})`);
    expect((await fetch(`${first.url}/api/service/workspace`, { headers: { authorization: `Bearer ${first.ready.apiKey}` } })).status).toBe(200);

    await first.close();
    expect(existsSync(`${file}.lock`)).toBe(false);
    const third = await start(file);
    expect(third.ready.userId).toBe(first.ready.userId);
  });

  it('knows a data file by its real name: a link to it, or to its directory, meets the same lock, and a snapshot replaces the file, not the link', async () => {
    const file = dataFile();
    const first = await start(file);
    const link = join(dirname(file), 'link.json');
    symlinkSync(file, link);
    const linkedDir = `${dirname(file)}-link`;
    symlinkSync(dirname(file), linkedDir);
    dirs.push(linkedDir);
    for (const other of [link, join(linkedDir, 'state.json')]) {
      await expect(startServer({ host: '127.0.0.1', port: 0, dataFile: other })).rejects.toThrow(`${file} is in use by another svc serve (pid ${process.pid})`);
    }
    await first.close();
    running.splice(running.indexOf(first), 1);
    const throughLink = await start(link);
    expect(throughLink.ready.userId).toBe(first.ready.userId);
    await throughLink.close();
    running.splice(running.indexOf(throughLink), 1);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readdirSync(dirname(file)).sort()).toEqual(['link.json', 'state.json']);
  });

  it('follows a link to a data file not made yet: the file is made where the link points, and the link stays', async () => {
    const file = dataFile();
    const link = join(dirname(file), 'ahead.json');
    symlinkSync('state.json', link);
    const first = await start(link);
    await expect(startServer({ host: '127.0.0.1', port: 0, dataFile: file })).rejects.toThrow(`${file} is in use by another svc serve (pid ${process.pid})`);
    await first.close();
    running.splice(running.indexOf(first), 1);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readdirSync(dirname(file)).sort()).toEqual(['ahead.json', 'state.json']);
    expect((await start(file)).ready.userId).toBe(first.ready.userId);
  });

  it('svc serve refuses a data file another svc serve holds: exit 1, the pid named, the file untouched', async () => {
    const file = dataFile();
    const first = await serve(file);
    const before = readFileSync(file);
    const refused = await refusedServe(file);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).error).toMatchObject({ exitCode: 1 });
    expect(refused.stderr).toContain(`in use by another svc serve (pid ${first.child.pid})`);
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(first.alive()).toBe(true);
    // Shutdown releases the lock.
    await first.stop();
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('svc serve refuses a data file another svc serve holds through a hard link, in its directory or another: exit 1, the links named, the first serving on', async () => {
    const file = dataFile();
    const first = await serve(file);
    const before = readFileSync(file);
    const elsewhere = dataFile();
    for (const other of [join(dirname(file), 'hard.json'), elsewhere]) {
      linkSync(file, other);
      const refused = await refusedServe(other);
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stderr).toContain(`${other} has 2 names (hard links): another svc serve may be using it under another name`);
      expect(existsSync(`${other}.lock`)).toBe(false);
      rmSync(other);
    }
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(first.alive()).toBe(true);
    // The first server's own name is refused as before, by its lock.
    expect((await refusedServe(file)).stderr).toContain(`in use by another svc serve (pid ${first.child.pid})`);
  });

  it('takes over the lock of a server that was killed with SIGKILL, and keeps its saved state', async () => {
    const file = dataFile();
    const first = await serve(file);
    const created = await fetch(`${first.url}/api/service/user/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${first.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'before-kill' }),
    }).then((r) => r.json());
    first.child.kill('SIGKILL');
    await new Promise((done) => first.child.once('exit', done));
    expect(readFileSync(`${file}.lock`, 'utf8')).toMatch(lockOf(first.child.pid!));

    const second = await serve(file);
    expect(readFileSync(`${file}.lock`, 'utf8')).toMatch(lockOf(second.child.pid!));
    const answer = await fetch(`${second.url}/api/service/workspace`, { headers: { authorization: `Bearer ${created.secret}` } });
    expect(answer.status).toBe(200);
  });

  it('takes over a lock whose pid is not running', async () => {
    const file = dataFile();
    writeFileSync(`${file}.lock`, `${await deadPid()}\n`);
    await start(file);
    expect(readFileSync(`${file}.lock`, 'utf8')).toMatch(lockOf(process.pid));
  });

  it('takes over a lock naming its own pid that it does not hold (a pid reused after a restart)', async () => {
    const file = dataFile();
    writeFileSync(`${file}.lock`, `${process.pid}\n`);
    await start(file);
  });

  it('takes over a lock whose pid now runs a program that is not Node.js (pid 1, a sleep): not the svc serve that wrote it', async () => {
    const sleeping = spawn('sleep', ['60'], { stdio: 'ignore', env: { PATH: process.env.PATH ?? '', ...homeEnv() } });
    children.push(sleeping);
    await new Promise((done) => sleeping.once('spawn', done));
    expect(readFileSync('/proc/1/cmdline', 'utf8'), 'pid 1 must not be a Node.js program for this test').not.toMatch(/node|svc/i);
    for (const pid of [1, sleeping.pid!]) {
      const file = dataFile();
      writeFileSync(`${file}.lock`, `${pid} ${'0'.repeat(32)}\n`);
      await start(file);
      expect(readFileSync(`${file}.lock`, 'utf8')).toMatch(lockOf(process.pid));
    }
  });

  it('respects a lock held by a live Node.js process, and refuses a lock file it cannot read as one', async () => {
    const file = dataFile();
    const pid = livePid();
    writeFileSync(`${file}.lock`, `${pid}\n`);
    await expect(startServer({ host: '127.0.0.1', port: 0, dataFile: file })).rejects.toThrow(`(pid ${pid})`);
    writeFileSync(`${file}.lock`, 'not a pid');
    await expect(startServer({ host: '127.0.0.1', port: 0, dataFile: file })).rejects.toThrow(`${file}.lock is not an svc serve lock`);
    expect(readFileSync(`${file}.lock`, 'utf8')).toBe('not a pid');
  });

  it('releases the lock when start-up fails after taking it', async () => {
    const file = dataFile();
    writeFileSync(file, '{"format":');
    await expect(startServer({ host: '127.0.0.1', port: 0, dataFile: file })).rejects.toThrow(/not valid JSON/);
    expect(existsSync(`${file}.lock`)).toBe(false);
    const blocker = await startTestServer();
    const taken = startServer({ host: '127.0.0.1', port: blocker.port, dataFile: dataFile() });
    await expect(taken).rejects.toThrow(/already in use/);
    await blocker.close();
    // The fresh state was saved before listening failed; the lock is gone.
    expect(readdirSync(dirs.at(-1)!)).toEqual(['state.json']);
  });
});

describe('start-up checks', () => {
  it('removes temp files a crashed server left, and no other file', async () => {
    const file = dataFile();
    const dir = join(file, '..');
    const dead = await deadPid();
    const live = livePid();
    const stale = [`.state.json.${dead}.3.deadbeef.tmp`, `.state.json.${process.pid}.7.0a0b0c0d.tmp`];
    const kept = [`.state.json.${live}.1.cafef00d.tmp`, `.other.json.${dead}.1.deadbeef.tmp`, 'state.json.bak', '.state.json.tmp'];
    for (const name of [...stale, ...kept]) writeFileSync(join(dir, name), 'partial');
    await start(file);
    expect(readdirSync(dir).sort()).toEqual([...kept, 'state.json', 'state.json.lock'].sort());
  });

  it('refuses a data file whose directory does not exist, saying so', async () => {
    const file = join(dataFile(), '..', 'missing', 'state.json');
    const start = startServer({ host: '127.0.0.1', port: 0, dataFile: file });
    await expect(start).rejects.toBeInstanceOf(ServerStartError);
    await expect(start).rejects.toThrow(`cannot save ${file} (its directory does not exist)`);
  });

  it('refuses a data file whose directory is a file', async () => {
    const parent = join(dataFile(), '..', 'plain-file');
    writeFileSync(parent, '');
    const file = join(parent, 'state.json');
    await expect(startServer({ host: '127.0.0.1', port: 0, dataFile: file })).rejects.toThrow(
      `cannot save ${file} (a part of its path is not a directory)`,
    );
  });
});
