// tier: in-process
import * as fs from 'node:fs';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import Conf from 'conf';
import { openConfig, type ConfigStore } from '../../src/cli/config/store.js';
import type { ConfClass } from '../../src/cli/config/writer.js';
import { processStartTime } from '../../src/server/process-alive.js';
import { CliError, ExitCode } from '../../src/cli/errors/errors.js';

// Pass-through until a test makes one call fail, for the failures a tmpfs cannot make without root
// (test/e2e/config-writer.test.ts fills a real tmpfs for those).
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const { fsyncSync, renameSync, writeFileSync } = real;
  return { ...real, fsyncSync: vi.fn(fsyncSync), renameSync: vi.fn(renameSync), writeFileSync: vi.fn(writeFileSync) };
});

const KEY_A = `sk_${'A'.repeat(64)}`;
const KEY_B = `sk_${'B'.repeat(64)}`;
/** A pid no process can have: above any kernel's pid_max. */
const DEAD_PID = 2_147_483_646;
const token = (n: number) => n.toString(16).padStart(32, '0');

let dir: string;
let file: string;
let lock: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-config-'));
  file = join(dir, 'config.json');
  lock = `${file}.lock`;
});
afterEach(() => {
  // Back to the real functions.
  vi.resetAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

function open(lockWaitMs?: number): ConfigStore {
  return openConfig({ SVC_CONFIG_DIR: dir }, () => {}, { lockWaitMs });
}

/** The CliError `action` throws. */
async function failure(action: () => unknown): Promise<CliError> {
  try {
    await action();
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(ExitCode.failure);
    return error as CliError;
  }
  throw new Error('expected a CliError');
}

/** What is in the config directory besides config.json: no lock, no temp file may be left. */
const leftovers = () => readdirSync(dir).filter((name) => name !== 'config.json');

describe('update', () => {
  it('changes one profile, keeps the others and what else the file holds, and returns what it wrote', async () => {
    writeFileSync(file, JSON.stringify({ __internal__: { x: 1 }, profiles: { other: { apiKey: KEY_B } } }), { mode: 0o600 });
    const store = open();
    const written = await store.update('work', (profile) => ({ ...profile, apiKey: KEY_A, baseUrl: 'http://work.test', keyExpiry: undefined }));
    expect(written).toEqual({ apiKey: KEY_A, baseUrl: 'http://work.test' });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      __internal__: { x: 1 },
      profiles: { other: { apiKey: KEY_B }, work: { apiKey: KEY_A, baseUrl: 'http://work.test' } },
    });
    expect(store.getProfile('work')).toEqual(written);
    expect(store.profileNames()).toEqual(['other', 'work']);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(leftovers()).toEqual([]);
  });

  it('hands the change the profile as the file holds it at that moment, not as it was when the store was opened', async () => {
    const store = open();
    await open().update('work', () => ({ apiKey: KEY_A, baseUrl: 'http://work.test' }));
    const seen = vi.fn((profile: Readonly<{ apiKey?: string }>) => ({ ...profile, apiKey: KEY_B }));
    await store.update('work', seen);
    expect(seen).toHaveBeenCalledWith({ apiKey: KEY_A, baseUrl: 'http://work.test' });
    expect(open().getProfile('work')).toEqual({ apiKey: KEY_B, baseUrl: 'http://work.test' });
  });

  it('removes the profile when the change returns undefined, or a profile with no field set', async () => {
    const store = open();
    await store.update('a', () => ({ apiKey: KEY_A }));
    await store.update('b', () => ({ apiKey: KEY_B }));
    expect(await store.update('a', () => undefined)).toBeUndefined();
    expect(await store.update('b', ({ apiKey, ...rest }) => rest)).toBeUndefined();
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ profiles: {} });
    expect(store.getProfile('a')).toEqual({});
  });

  it('leaves the file untouched when nothing changes, and creates none to remove a profile that does not exist', async () => {
    const store = open();
    expect(await store.update('ghost', () => undefined)).toBeUndefined();
    expect(existsSync(file)).toBe(false);
    await store.update('work', () => ({ apiKey: KEY_A }));
    const before = statSync(file);
    expect(await store.update('work', (profile) => ({ ...profile }))).toEqual({ apiKey: KEY_A });
    expect(statSync(file).ino).toBe(before.ino);
  });

  it('writes the file as conf wrote it: tab-indented, no final newline', async () => {
    await open().update('default', () => ({ apiKey: KEY_A }));
    expect(readFileSync(file, 'utf8')).toBe(`{\n\t"profiles": {\n\t\t"default": {\n\t\t\t"apiKey": "${KEY_A}"\n\t\t}\n\t}\n}`);
  });

  it('treats profile names as names, __proto__ included', async () => {
    const store = open();
    await store.update('__proto__', () => ({ apiKey: KEY_A }));
    await store.update('constructor', () => ({ apiKey: KEY_B }));
    expect(JSON.parse(readFileSync(file, 'utf8')).profiles).toEqual(JSON.parse(`{"__proto__":{"apiKey":"${KEY_A}"},"constructor":{"apiKey":"${KEY_B}"}}`));
    expect(store.getProfile('__proto__')).toEqual({ apiKey: KEY_A });
    expect(store.getProfile('toString')).toEqual({});
  });

  it('writes through a symlinked config file to its target, and the link stays a link', async () => {
    const target = mkdtempSync(join(tmpdir(), 'svc-config-target-'));
    try {
      writeFileSync(join(target, 'real.json'), '{"profiles":{}}', { mode: 0o600 });
      symlinkSync(join(target, 'real.json'), file);
      await open().update('default', () => ({ apiKey: KEY_A }));
      expect(lstatSync(file).isSymbolicLink()).toBe(true);
      expect(JSON.parse(readFileSync(join(target, 'real.json'), 'utf8')).profiles.default.apiKey).toBe(KEY_A);
      expect(readdirSync(target)).toEqual(['real.json']);
    } finally {
      rmSync(target, { recursive: true, force: true });
    }
  });

  it('writes nothing, and gives the lock back, when the change throws', async () => {
    const store = open();
    await store.update('default', () => ({ apiKey: KEY_A }));
    const before = readFileSync(file, 'utf8');
    await expect(
      store.update('default', () => {
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(leftovers()).toEqual([]);
  });

  it('refuses an update from inside a change, which would deadlock on its own lock', async () => {
    const store = open();
    const nested = store.update('a', () => {
      void store.update('b', () => ({ apiKey: KEY_B }));
      return { apiKey: KEY_A };
    });
    await expect(nested).rejects.toThrow(/inside a change/);
    expect(existsSync(file)).toBe(false);
  });
});

describe('the default profile', () => {
  it('is set by an update with setDefault, in the same write, beside what else the file holds', async () => {
    writeFileSync(file, JSON.stringify({ team: 'kept', profiles: { work: { apiKey: KEY_A } } }));
    const store = open();
    expect(store.defaultProfile()).toBeUndefined();
    expect(await store.update('work', (profile) => ({ ...profile }), { setDefault: true })).toEqual({ apiKey: KEY_A });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ team: 'kept', defaultProfile: 'work', profiles: { work: { apiKey: KEY_A } } });
    expect(open().defaultProfile()).toBe('work');
  });

  it('`default` as the default is the field left out; setDefault false clears it only for the profile it names', async () => {
    const store = open();
    await store.update('work', () => ({ apiKey: KEY_A }), { setDefault: true });
    await store.update('other', () => ({ apiKey: KEY_B }), { setDefault: false });
    expect(store.defaultProfile()).toBe('work');
    await store.update('work', () => undefined, { setDefault: false });
    expect(store.defaultProfile()).toBeUndefined();
    await store.update('other', (profile) => ({ ...profile }), { setDefault: true });
    await store.update('default', (profile) => ({ ...profile }), { setDefault: true });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ profiles: { other: { apiKey: KEY_B } } });
  });

  it('an update without setDefault leaves it as it is', async () => {
    const store = open();
    await store.update('work', () => ({ apiKey: KEY_A }), { setDefault: true });
    await store.update('work', () => undefined);
    expect(store.defaultProfile()).toBe('work');
  });
});

describe('a config file not in the shape svc writes', () => {
  const shapes: [string, string, RegExp][] = [
    ['an empty file', '', /it is empty/],
    ['a truncated file', '{"profiles":{"default":{"apiKey":"sk_', /it is not valid JSON/],
    ['an array', '[]', /it holds an array, where svc expects an object with "profiles"/],
    ['null', 'null', /it holds null/],
    ['"profiles": null', '{"profiles":null}', /its "profiles" is null, where svc expects an object/],
    ['"profiles": []', '{"profiles":[]}', /its "profiles" is an array/],
    ['a profile that is a string', '{"profiles":{"work":"sk_x"}}', /profile "work" is a string, where svc expects an object/],
    ['a profile that is null', '{"profiles":{"work":null}}', /profile "work" is null/],
    ['an apiKey that is a number', '{"profiles":{"work":{"apiKey":42}}}', /the "apiKey" of profile "work" is a number, where svc expects a string/],
    ['a keyExpiry without its hint', '{"profiles":{"a":{"keyExpiry":{"id":"k","expiresAt":null}}}}', /the "keyExpiry.hint" of profile "a" is missing/],
    ['a pendingRotation that is an array', '{"profiles":{"a":{"pendingRotation":[]}}}', /the "pendingRotation" of profile "a" is an array, where svc expects an object/],
  ];

  it.each(shapes)('is refused when opened, with its path and what is wrong: %s', async (_, content, problem) => {
    writeFileSync(file, content, { mode: 0o600 });
    const error = await failure(() => open());
    expect(error.message).toContain(`The config file ${file} could not be read: `);
    expect(error.message).toMatch(problem);
    expect(error.message).toContain('svc has left it as it is');
    expect(readFileSync(file, 'utf8')).toBe(content);
  });

  it.each(shapes)('is never written over by a change: %s', async (_, content, problem) => {
    const store = open();
    await store.update('other', () => ({ apiKey: KEY_B }));
    writeFileSync(file, content);
    expect((await failure(() => store.update('default', () => ({ apiKey: KEY_A })))).message).toMatch(problem);
    expect((await failure(() => store.getProfile('default'))).message).toMatch(problem);
    expect(readFileSync(file, 'utf8')).toBe(content);
    expect(leftovers()).toEqual([]);
  });

  it('keeps fields it does not know, in profiles and beside them', async () => {
    const content = JSON.stringify({ profiles: { a: { apiKey: KEY_A, future: [1] } }, version: 2 });
    writeFileSync(file, content, { mode: 0o600 });
    await open().update('b', () => ({ apiKey: KEY_B }));
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ profiles: { a: { apiKey: KEY_A, future: [1] }, b: { apiKey: KEY_B } }, version: 2 });
  });

  it('takes a file without "profiles" for one without profiles', async () => {
    writeFileSync(file, '{}', { mode: 0o600 });
    expect(open().profileNames()).toEqual([]);
  });
});

describe('the lock', () => {
  it('is not needed to read: a lock held by a live process stops changes only', async () => {
    const store = open(100);
    await store.update('default', () => ({ apiKey: KEY_A }));
    const before = readFileSync(file, 'utf8');
    // The process that started this test runs, and is not this one.
    writeFileSync(lock, `${process.ppid} ${token(1)}\n`);
    expect(open().getProfile('default')).toEqual({ apiKey: KEY_A });
    expect(store.profileNames()).toEqual(['default']);

    const started = performance.now();
    const error = await failure(() => store.update('default', () => ({ apiKey: KEY_B })));
    expect(performance.now() - started).toBeGreaterThanOrEqual(100);
    expect(error.message).toBe(
      `Could not save profile 'default' to ${file}: ${lock} has been held by another svc (pid ${process.ppid}) for more than 0.1 s. ` +
        `Nothing was changed. If no svc is running, remove ${lock} and try again.`,
    );
    expect(readFileSync(file, 'utf8')).toBe(before);
    // Not ours to remove.
    expect(readFileSync(lock, 'utf8')).toBe(`${process.ppid} ${token(1)}\n`);
  });

  it('waits for a lock that is not one svc makes, then names it', async () => {
    writeFileSync(lock, 'made by hand\n');
    expect((await failure(() => open(50).update('default', () => ({ apiKey: KEY_A })))).message).toContain(
      `${lock} is there, and it is not a lock svc made`,
    );
    expect(existsSync(file)).toBe(false);
  });

  it('is taken over from a process that is gone, as is a takeover it left half done', async () => {
    writeFileSync(lock, `${DEAD_PID} ${token(2)}\n`);
    writeFileSync(`${lock}.break`, `${DEAD_PID} ${token(3)}\n`);
    // A lock wait far past the test's timeout: a takeover that waited instead would fail the test.
    const store = open(60_000);
    // The first attempt clears the dead breaker; the next takes the lock over.
    await store.update('default', () => ({ apiKey: KEY_A }));
    expect(store.getProfile('default')).toEqual({ apiKey: KEY_A });
    expect(leftovers()).toEqual([]);
  });

  it("is taken over from an earlier process that had this one's pid", async () => {
    writeFileSync(lock, `${process.pid} ${token(4)}\n`);
    await open(60_000).update('default', () => ({ apiKey: KEY_A }));
    expect(leftovers()).toEqual([]);
  });
});

describe('a lock whose pid now belongs to another process (issue 37)', () => {
  it('names its holder by pid, token and start time', async () => {
    const seen: string[] = [];
    await open().update('default', () => {
      seen.push(readFileSync(lock, 'utf8'));
      return { apiKey: KEY_A };
    });
    expect(seen[0]).toBe(`${process.pid} ${seen[0]!.split(' ')[1]} ${processStartTime(process.pid)}\n`);
  });

  it('is taken over at once when the live process with that pid started at another time (pid 1 here)', async () => {
    const init = processStartTime(1);
    expect(init).not.toBeNull();
    writeFileSync(lock, `1 ${token(5)} ${Number(init) + 1}\n`);
    // A wait far past the test's timeout: a lock taken for its holder's would fail the test.
    await open(60_000).update('default', () => ({ apiKey: KEY_A }));
    expect(leftovers()).toEqual([]);
  });

  it("an earlier svc's lock (no start time) naming a live process that runs no Node.js program (pid 1 here) is taken over at once, never waited on", async () => {
    expect(readFileSync('/proc/1/cmdline', 'utf8'), 'pid 1 must not be a Node.js program for this test').not.toMatch(/node|svc/i);
    writeFileSync(lock, `1 ${token(9)}\n`);
    const warnings: string[] = [];
    // A wait far past the test's timeout: a lock taken for its holder's would fail the test; a wait of a second would be said.
    await openConfig({ SVC_CONFIG_DIR: dir }, (line) => warnings.push(line), { lockWaitMs: 60_000 }).update('default', () => ({ apiKey: KEY_A }));
    expect(warnings).toEqual([]);
    expect(leftovers()).toEqual([]);
  });

  it("an earlier svc's lock naming a live Node.js process is its holder's, and is waited on", async () => {
    // The process that started this test is node, as an earlier svc would be.
    writeFileSync(lock, `${process.ppid} ${token(10)}\n`);
    const warnings: string[] = [];
    const store = openConfig({ SVC_CONFIG_DIR: dir }, (line) => warnings.push(line), { lockWaitMs: 1_300 });
    expect((await failure(() => store.update('default', () => ({ apiKey: KEY_A })))).message).toContain(`held by another svc (pid ${process.ppid})`);
    expect(warnings).toHaveLength(1);
    expect(readFileSync(lock, 'utf8')).toBe(`${process.ppid} ${token(10)}\n`);
  });

  it('says once that it waits, when the wait lasts more than a moment, naming the holder', async () => {
    writeFileSync(lock, `${process.ppid} ${token(7)} ${processStartTime(process.ppid)}\n`);
    const warnings: string[] = [];
    const store = openConfig({ SVC_CONFIG_DIR: dir }, (line) => warnings.push(line), { lockWaitMs: 1_300 });
    await failure(() => store.update('default', () => ({ apiKey: KEY_A })));
    expect(warnings).toEqual([`Waiting for another svc (pid ${process.ppid}) to finish its change to ${file}; svc waits up to 1.3 s.`]);
  });

  it('is waited for on the event loop, where a signal ends the wait at once: nothing saved, the lock left as it was', async () => {
    const before = `${process.ppid} ${token(8)} ${processStartTime(process.ppid)}\n`;
    writeFileSync(lock, before);
    const listeners = new Set<(signal: NodeJS.Signals) => void>();
    const onSignal = (_: NodeJS.Signals[], listener: (signal: NodeJS.Signals) => void) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    };
    // Told once the wait has lasted a second: the store is waiting, and the signal comes then.
    const warn = () => [...listeners].forEach((listener) => listener('SIGTERM'));
    const store = openConfig({ SVC_CONFIG_DIR: dir }, warn, { lockWaitMs: 60_000, onSignal });
    const error = (await store.update('default', () => ({ apiKey: KEY_A })).catch((e: unknown) => e)) as CliError;
    expect(error).toMatchObject({ name: 'InterruptedError', signal: 'SIGTERM', exitCode: ExitCode.terminated });
    expect(error.message).toBe(
      `Stopped by SIGTERM while waiting for another svc (pid ${process.ppid}) to finish its change to ${file}: profile 'default' was not saved. Nothing was changed.`,
    );
    expect(existsSync(file)).toBe(false);
    expect(readFileSync(lock, 'utf8')).toBe(before);
    expect(listeners.size).toBe(0);
  });

  it('a signal before the lock is taken: nothing saved', async () => {
    const onSignal = (_: NodeJS.Signals[], listener: (signal: NodeJS.Signals) => void) => {
      listener('SIGHUP');
      return () => {};
    };
    const error = (await openConfig({ SVC_CONFIG_DIR: dir }, () => {}, { onSignal }).update('default', () => ({ apiKey: KEY_A })).catch((e: unknown) => e)) as CliError;
    expect(error).toMatchObject({ name: 'InterruptedError', signal: 'SIGHUP' });
    expect(error.message).toBe(`Stopped by SIGHUP before profile 'default' was saved to ${file}. Nothing was changed.`);
    expect(existsSync(file)).toBe(false);
    expect(leftovers()).toEqual([]);
  });

  it('two changes of one process at once both land: each holds the lock only within its own turn', async () => {
    const store = open(60_000);
    await Promise.all(['one', 'two', 'three'].map((name) => store.update(name, () => ({ baseUrl: `http://${name}.test` }))));
    expect(store.profileNames()).toEqual(['one', 'three', 'two']);
    expect(leftovers()).toEqual([]);
  });

  it('is waited for while the process with that pid is the one that took it', async () => {
    writeFileSync(lock, `${process.ppid} ${token(6)} ${processStartTime(process.ppid)}\n`);
    expect((await failure(() => open(50).update('default', () => ({ apiKey: KEY_A })))).message).toContain(`held by another svc (pid ${process.ppid})`);
  });

  it('leaves nothing of writers killed mid-save: their temporary files are removed by the next save', async () => {
    const dead = [`config.json.lock.${DEAD_PID}.0123abcd.tmp`, `config.json.lock.break.${DEAD_PID}.0123abcd.tmp`, 'config.json.tmp-4811a2b3c', 'config.json.tmp-77-0a1b2c3d4e5f', 'config.json.previous'];
    for (const name of dead) writeFileSync(join(dir, name), '{"profiles":');
    // One of a live process is its own business.
    const live = `config.json.lock.${process.ppid}.0123abcd.tmp`;
    writeFileSync(join(dir, live), '');
    await open().update('default', () => ({ apiKey: KEY_A }));
    expect(leftovers()).toEqual([live]);
  });
});

describe('files that are not what svc writes, where the config and its lock go (issue 37)', () => {
  it('a directory as config.json is refused, neither read nor chmodded, with no false warning (a FIFO: test/e2e/config-writer.test.ts)', () => {
    mkdirSync(file, { mode: 0o755 });
    const warnings: string[] = [];
    expect(() => openConfig({ SVC_CONFIG_DIR: dir }, (line) => warnings.push(line))).toThrow(`The config file ${file} is a directory, not a regular file.`);
    expect(warnings).toEqual([]);
    expect(statSync(file).mode & 0o777).toBe(0o755);
  });

  it('never changes the mode of a file it reaches through a link: a readable config is warned of, any other file refused as it is', async () => {
    const target = mkdtempSync(join(tmpdir(), 'svc-config-target-'));
    try {
      // Someone's notes, linked where the config goes: not svc's file, not JSON.
      writeFileSync(join(target, 'notes.txt'), 'public notes\n', { mode: 0o644 });
      chmodSync(join(target, 'notes.txt'), 0o644);
      symlinkSync(join(target, 'notes.txt'), file);
      const warnings: string[] = [];
      expect(() => openConfig({ SVC_CONFIG_DIR: dir }, (line) => warnings.push(line))).toThrow('it is not valid JSON');
      expect(warnings).toEqual([]);
      expect(statSync(join(target, 'notes.txt')).mode & 0o777).toBe(0o644);

      // A real config, readable by others, through a link: said, not changed.
      rmSync(file);
      writeFileSync(join(target, 'shared.json'), '{"profiles":{}}');
      chmodSync(join(target, 'shared.json'), 0o644);
      symlinkSync(join(target, 'shared.json'), file);
      openConfig({ SVC_CONFIG_DIR: dir }, (line) => warnings.push(line));
      expect(warnings).toEqual([
        `${file} links to ${join(realpathSync(target), 'shared.json')}, which other users can read, and it holds API keys: make it 0600 (svc changes no mode through a link; a save of its own writes the file anew, as 0600).`,
      ]);
      expect(statSync(join(target, 'shared.json')).mode & 0o777).toBe(0o644);
    } finally {
      rmSync(target, { recursive: true, force: true });
    }
  });

  it('a link to a file not made yet is read as no profiles, and the first save makes that file', async () => {
    const target = mkdtempSync(join(tmpdir(), 'svc-config-target-'));
    try {
      symlinkSync(join(target, 'svc.json'), file);
      const store = open();
      expect(store.profileNames()).toEqual([]);
      await store.update('default', () => ({ apiKey: KEY_A }));
      expect(lstatSync(file).isSymbolicLink()).toBe(true);
      expect(JSON.parse(readFileSync(join(target, 'svc.json'), 'utf8')).profiles.default.apiKey).toBe(KEY_A);
    } finally {
      rmSync(target, { recursive: true, force: true });
    }
  });

  it('a link into a directory that does not exist is named as such, not an unexpected error', async () => {
    symlinkSync(join(dir, 'gone', 'svc.json'), file);
    expect((await failure(() => open())).message).toBe(
      `The config file ${file} is a symbolic link to ${join(dir, 'gone', 'svc.json')}, whose directory does not exist. Fix or remove the link, or set SVC_CONFIG_DIR.`,
    );
  });

  it('a lock that is a link is not read through, nor waited on for ever', async () => {
    symlinkSync(join(dir, 'elsewhere'), lock);
    expect((await failure(() => open(60_000).update('default', () => ({ apiKey: KEY_A })))).message).toContain(
      `${lock} is there, and it is not a lock svc made`,
    );
    expect(existsSync(file)).toBe(false);
  });
});

describe('no config directory yet (issue 37)', () => {
  it('reading makes none; the first save does, mode 0700', async () => {
    const config = join(dir, 'home', '.config', 'svc');
    const store = openConfig({ SVC_CONFIG_DIR: config }, () => {});
    expect(store.profileNames()).toEqual([]);
    expect(store.getProfile('default')).toEqual({});
    expect(existsSync(join(dir, 'home'))).toBe(false);
    await store.update('default', () => ({ apiKey: KEY_A }));
    expect(statSync(config).mode & 0o777).toBe(0o700);
    expect(openConfig({ SVC_CONFIG_DIR: config }, () => {}).getProfile('default')).toEqual({ apiKey: KEY_A });
  });

  it('a save that cannot make it names the cause and SVC_CONFIG_DIR', async () => {
    const home = join(dir, 'home');
    mkdirSync(home, { mode: 0o500 });
    // A file where a directory is needed fails for root too, which a mode does not.
    writeFileSync(join(home, '.config'), '');
    const config = join(home, '.config', 'svc');
    const error = await failure(() => openConfig({ SVC_CONFIG_DIR: config }, () => {}).update('default', () => ({ apiKey: KEY_A })));
    expect(error.message).toMatch(new RegExp(`^Could not save profile 'default' to ${join(config, 'config.json')}: its directory ${config} could not be made: a part of its path is not a directory \\(ENOTDIR\\)`));
    expect(error.message).toContain('SVC_CONFIG_DIR chooses another directory for the profiles.');
    chmodSync(home, 0o700);
  });
});

describe('a save that fails', () => {
  const errno = (code: string) => Object.assign(new Error(`${code}: simulated`), { code });
  const SUFFIX = 'Nothing was changed; the file holds what it held before. SVC_CONFIG_DIR chooses another directory for the profiles.';

  async function expectNothingChanged(store: ConfigStore, cause: string) {
    const before = readFileSync(file, 'utf8');
    const error = await failure(() => store.update('default', () => ({ apiKey: KEY_B })));
    expect(error.message).toBe(`Could not save profile 'default' to ${file}: ${cause}. ${SUFFIX}`);
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(leftovers()).toEqual([]);
  }

  /** conf as a full disk leaves it: its write of the new file stops after 20 bytes, failing with `code`, or (null) without a word. */
  function confCutShort(code: string | null): () => Promise<ConfClass> {
    class CutShort extends Conf<Record<string, unknown>> {
      override get store(): Record<string, unknown> {
        return super.store;
      }
      override set store(value: Record<string, unknown>) {
        writeFileSync(this.path, JSON.stringify(value).slice(0, 20));
        if (code !== null) throw errno(code);
      }
    }
    // A subclass fixes conf's type parameter, which the class it stands in for leaves open.
    return async () => CutShort as unknown as ConfClass;
  }

  it.each([
    ['ENOSPC', 'no space left on the device (ENOSPC)'],
    ['EDQUOT', 'the disk quota is exhausted (EDQUOT)'],
    ['EROFS', 'the file system is read-only (EROFS)'],
    ['EIO', 'EIO: simulated'],
  ])('writing the new file (%s): says so, names the file, and leaves it and its directory as they were', async (code, cause) => {
    await open().update('default', () => ({ apiKey: KEY_A }));
    await expectNothingChanged(openConfig({ SVC_CONFIG_DIR: dir }, () => {}, { loadConf: confCutShort(code) }), cause);
  });

  it('a new file cut short without an error (as a write to a full disk may end) is never put in place', async () => {
    await open().update('default', () => ({ apiKey: KEY_A }));
    await expectNothingChanged(openConfig({ SVC_CONFIG_DIR: dir }, () => {}, { loadConf: confCutShort(null) }), 'no space left on the device (ENOSPC)');
  });

  it.each([
    ['flushed', () => vi.mocked(fs.fsyncSync).mockImplementationOnce(() => { throw errno('EIO'); })],
    ['renamed into place', () => vi.mocked(fs.renameSync).mockImplementationOnce(() => { throw errno('EXDEV'); })],
  ])('a new file that cannot be %s is removed, and the old one stays', async (_, fail) => {
    const store = open();
    await store.update('default', () => ({ apiKey: KEY_A }));
    fail();
    const error = await failure(() => store.update('default', () => ({ apiKey: KEY_B })));
    expect(error.message).toContain(SUFFIX);
    expect(store.getProfile('default').apiKey).toBe(KEY_A);
    expect(leftovers()).toEqual([]);
  });

  it('what is said is what the file holds: a rename that fails after it was made is a save', async () => {
    const store = open();
    const real = (await vi.importActual<typeof fs>('node:fs')).renameSync;
    vi.mocked(fs.renameSync).mockImplementationOnce((from, to) => {
      real(from, to);
      throw errno('EIO');
    });
    expect(await store.update('default', () => ({ apiKey: KEY_B }))).toEqual({ apiKey: KEY_B });
    expect(store.getProfile('default').apiKey).toBe(KEY_B);
  });

  it('when the lock cannot even be made: the lock file is named, not the config', async () => {
    const store = open();
    await store.update('default', () => ({ apiKey: KEY_A }));
    const before = readFileSync(file, 'utf8');
    vi.mocked(fs.writeFileSync).mockImplementationOnce(() => {
      throw errno('EROFS');
    });
    const error = await failure(() => store.update('default', () => ({ apiKey: KEY_B })));
    expect(error.message).toBe(`Could not save profile 'default' to ${file}: its lock file ${lock} could not be made: the file system is read-only (EROFS). ${SUFFIX}`);
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(leftovers()).toEqual([]);
  });
});
