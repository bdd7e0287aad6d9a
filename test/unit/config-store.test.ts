import * as fs from 'node:fs';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openConfig, type ConfigStore } from '../../src/cli/config/store.js';
import { CliError, ExitCode } from '../../src/cli/errors.js';

// Pass-through until a test makes one call fail, for the failures a tmpfs cannot make without root.
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const { openSync, renameSync, writeFileSync, writeSync } = real;
  return { ...real, openSync: vi.fn(openSync), renameSync: vi.fn(renameSync), writeFileSync: vi.fn(writeFileSync), writeSync: vi.fn(writeSync) };
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
function failure(action: () => unknown): CliError {
  try {
    action();
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
  it('changes one profile, keeps the others and what else the file holds, and returns what it wrote', () => {
    writeFileSync(file, JSON.stringify({ __internal__: { x: 1 }, profiles: { other: { apiKey: KEY_B } } }), { mode: 0o600 });
    const store = open();
    const written = store.update('work', (profile) => ({ ...profile, apiKey: KEY_A, baseUrl: 'http://work.test', keyExpiry: undefined }));
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

  it('hands the change the profile as the file holds it at that moment, not as it was when the store was opened', () => {
    const store = open();
    open().update('work', () => ({ apiKey: KEY_A, baseUrl: 'http://work.test' }));
    const seen = vi.fn((profile: Readonly<{ apiKey?: string }>) => ({ ...profile, apiKey: KEY_B }));
    store.update('work', seen);
    expect(seen).toHaveBeenCalledWith({ apiKey: KEY_A, baseUrl: 'http://work.test' });
    expect(open().getProfile('work')).toEqual({ apiKey: KEY_B, baseUrl: 'http://work.test' });
  });

  it('removes the profile when the change returns undefined, or a profile with no field set', () => {
    const store = open();
    store.update('a', () => ({ apiKey: KEY_A }));
    store.update('b', () => ({ apiKey: KEY_B }));
    expect(store.update('a', () => undefined)).toBeUndefined();
    expect(store.update('b', ({ apiKey, ...rest }) => rest)).toBeUndefined();
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ profiles: {} });
    expect(store.getProfile('a')).toEqual({});
  });

  it('leaves the file untouched when nothing changes, and creates none to remove a profile that does not exist', () => {
    const store = open();
    expect(store.update('ghost', () => undefined)).toBeUndefined();
    expect(existsSync(file)).toBe(false);
    store.update('work', () => ({ apiKey: KEY_A }));
    const before = statSync(file);
    expect(store.update('work', (profile) => ({ ...profile }))).toEqual({ apiKey: KEY_A });
    expect(statSync(file).ino).toBe(before.ino);
  });

  it('writes the file in the format conf wrote: tab-indented, no final newline', () => {
    open().update('default', () => ({ apiKey: KEY_A }));
    expect(readFileSync(file, 'utf8')).toBe(`{\n\t"profiles": {\n\t\t"default": {\n\t\t\t"apiKey": "${KEY_A}"\n\t\t}\n\t}\n}`);
  });

  it('treats profile names as names, __proto__ included', () => {
    const store = open();
    store.update('__proto__', () => ({ apiKey: KEY_A }));
    store.update('constructor', () => ({ apiKey: KEY_B }));
    expect(JSON.parse(readFileSync(file, 'utf8')).profiles).toEqual(JSON.parse(`{"__proto__":{"apiKey":"${KEY_A}"},"constructor":{"apiKey":"${KEY_B}"}}`));
    expect(store.getProfile('__proto__')).toEqual({ apiKey: KEY_A });
    expect(store.getProfile('toString')).toEqual({});
  });

  it('writes through a symlinked config file to its target, and the link stays a link', () => {
    const target = mkdtempSync(join(tmpdir(), 'svc-config-target-'));
    try {
      writeFileSync(join(target, 'real.json'), '{"profiles":{}}', { mode: 0o600 });
      symlinkSync(join(target, 'real.json'), file);
      open().update('default', () => ({ apiKey: KEY_A }));
      expect(lstatSync(file).isSymbolicLink()).toBe(true);
      expect(JSON.parse(readFileSync(join(target, 'real.json'), 'utf8')).profiles.default.apiKey).toBe(KEY_A);
      expect(readdirSync(target)).toEqual(['real.json']);
    } finally {
      rmSync(target, { recursive: true, force: true });
    }
  });

  it('writes nothing, and gives the lock back, when the change throws', () => {
    const store = open();
    store.update('default', () => ({ apiKey: KEY_A }));
    const before = readFileSync(file, 'utf8');
    expect(() =>
      store.update('default', () => {
        throw new Error('changed my mind');
      }),
    ).toThrow('changed my mind');
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(leftovers()).toEqual([]);
  });

  it('refuses an update from inside a change, which would deadlock on its own lock', () => {
    const store = open();
    expect(() => store.update('a', () => store.update('b', () => ({ apiKey: KEY_B })))).toThrow(/inside a change/);
    expect(existsSync(file)).toBe(false);
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

  it.each(shapes)('is refused when opened, with its path and what is wrong: %s', (_, content, problem) => {
    writeFileSync(file, content, { mode: 0o600 });
    const error = failure(() => open());
    expect(error.message).toContain(`The config file ${file} could not be read: `);
    expect(error.message).toMatch(problem);
    expect(error.message).toContain('svc has left it as it is');
    expect(readFileSync(file, 'utf8')).toBe(content);
  });

  it.each(shapes)('is never written over by a change: %s', (_, content, problem) => {
    const store = open();
    store.update('other', () => ({ apiKey: KEY_B }));
    writeFileSync(file, content);
    expect(failure(() => store.update('default', () => ({ apiKey: KEY_A }))).message).toMatch(problem);
    expect(failure(() => store.getProfile('default')).message).toMatch(problem);
    expect(readFileSync(file, 'utf8')).toBe(content);
    expect(leftovers()).toEqual([]);
  });

  it('keeps fields it does not know, in profiles and beside them', () => {
    const content = JSON.stringify({ profiles: { a: { apiKey: KEY_A, future: [1] } }, version: 2 });
    writeFileSync(file, content, { mode: 0o600 });
    open().update('b', () => ({ apiKey: KEY_B }));
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ profiles: { a: { apiKey: KEY_A, future: [1] }, b: { apiKey: KEY_B } }, version: 2 });
  });

  it('takes a file without "profiles" for one without profiles', () => {
    writeFileSync(file, '{}', { mode: 0o600 });
    expect(open().profileNames()).toEqual([]);
  });
});

describe('the lock', () => {
  it('is not needed to read: a lock held by a live process stops changes only', () => {
    const store = open(100);
    store.update('default', () => ({ apiKey: KEY_A }));
    const before = readFileSync(file, 'utf8');
    // The process that started this test runs, and is not this one.
    writeFileSync(lock, `${process.ppid} ${token(1)}\n`);
    expect(open().getProfile('default')).toEqual({ apiKey: KEY_A });
    expect(store.profileNames()).toEqual(['default']);

    const started = performance.now();
    const error = failure(() => store.update('default', () => ({ apiKey: KEY_B })));
    expect(performance.now() - started).toBeGreaterThanOrEqual(100);
    expect(error.message).toBe(
      `Could not save profile 'default' to ${file}: ${lock} has been held by another svc (pid ${process.ppid}) for more than 0.1 s. ` +
        `Nothing was changed. If no svc is running, remove ${lock} and try again.`,
    );
    expect(readFileSync(file, 'utf8')).toBe(before);
    // Not ours to remove.
    expect(readFileSync(lock, 'utf8')).toBe(`${process.ppid} ${token(1)}\n`);
  });

  it('waits for a lock that is not one svc makes, then names it', () => {
    writeFileSync(lock, 'made by hand\n');
    expect(failure(() => open(50).update('default', () => ({ apiKey: KEY_A }))).message).toContain(
      `${lock} has been held by something that is not svc for more than 0.05 s`,
    );
    expect(existsSync(file)).toBe(false);
  });

  it('is taken over from a process that is gone, as is a takeover it left half done', () => {
    writeFileSync(lock, `${DEAD_PID} ${token(2)}\n`);
    writeFileSync(`${lock}.break`, `${DEAD_PID} ${token(3)}\n`);
    const store = open(60_000);
    const started = performance.now();
    // The first attempt clears the dead breaker; the next takes the lock over.
    store.update('default', () => ({ apiKey: KEY_A }));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(store.getProfile('default')).toEqual({ apiKey: KEY_A });
    expect(leftovers()).toEqual([]);
  });

  it("is taken over from an earlier process that had this one's pid", () => {
    writeFileSync(lock, `${process.pid} ${token(4)}\n`);
    open(60_000).update('default', () => ({ apiKey: KEY_A }));
    expect(leftovers()).toEqual([]);
  });
});

describe('a save that fails', () => {
  const errno = (code: string) => Object.assign(new Error(`${code}: simulated`), { code });

  function expectNothingChanged(store: ConfigStore, cause: string) {
    const before = readFileSync(file, 'utf8');
    const error = failure(() => store.update('default', () => ({ apiKey: KEY_B })));
    expect(error.message).toBe(`Could not save profile 'default' to ${file}: ${cause}. Nothing was changed; the file holds what it held before.`);
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(leftovers()).toEqual([]);
  }

  it.each([
    ['ENOSPC', 'no space left on the device'],
    ['EDQUOT', 'the disk quota is exhausted'],
    ['EIO', 'EIO: simulated'],
  ])('while writing (%s) says so, names the file, and leaves it and its directory as they were', (code, cause) => {
    const store = open();
    store.update('default', () => ({ apiKey: KEY_A }));
    vi.mocked(fs.writeSync).mockImplementationOnce(() => {
      throw errno(code);
    });
    expectNothingChanged(store, cause);
  });

  it('when the temp file cannot be made (EACCES, EROFS)', () => {
    const store = open();
    store.update('default', () => ({ apiKey: KEY_A }));
    for (const [code, cause] of [
      ['EACCES', 'permission denied'],
      ['EROFS', 'the file system is read-only'],
    ]) {
      vi.mocked(fs.openSync).mockImplementationOnce(() => {
        throw errno(code!);
      });
      expectNothingChanged(store, cause!);
    }
  });

  it('at the rename is a failure too: success is reported only once the new file is in place', () => {
    const store = open();
    store.update('default', () => ({ apiKey: KEY_A }));
    vi.mocked(fs.renameSync).mockImplementationOnce(() => {
      throw errno('EROFS');
    });
    expectNothingChanged(store, 'the file system is read-only');
  });

  it('when the lock cannot even be made', () => {
    const store = open();
    store.update('default', () => ({ apiKey: KEY_A }));
    vi.mocked(fs.writeFileSync).mockImplementationOnce(() => {
      throw errno('EROFS');
    });
    expectNothingChanged(store, 'the file system is read-only');
  });

  it('is not a short write taken for the whole: a write that fits part of the data is continued', async () => {
    const real = (await vi.importActual<typeof fs>('node:fs')).writeSync;
    // As on a nearly full disk: each write takes at most 7 bytes and says so.
    vi.mocked(fs.writeSync).mockImplementation(((fd: number, data: Buffer, offset: number) =>
      real(fd, data, offset, Math.min(7, data.length - offset))) as typeof fs.writeSync);
    open().update('default', () => ({ apiKey: KEY_A, baseUrl: 'http://a-long-enough-address.test' }));
    expect(vi.mocked(fs.writeSync).mock.calls.length).toBeGreaterThan(10);
    expect(JSON.parse(readFileSync(file, 'utf8')).profiles.default.baseUrl).toBe('http://a-long-enough-address.test');
  });
});
