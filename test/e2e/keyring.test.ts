// tier: process
/**
 * Keys kept in the OS keyring (issue 26): `svc login --keyring`, `svc
 * profile move-key`, logout and remove deleting the entry, status naming
 * where the key came from, and a keyring that is locked, absent or not
 * installed failing with exit 3 and never falling back to the config file.
 * Each keyring here is private to this file: a D-Bus session bus of its own
 * with gnome-keyring's Secret Service on it (test/helpers/keyring.ts).
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { keyHint } from '../../src/contract/key-format.js';
import { SVC_BIN, call, cleanEnv, svc, tempConfigDir, useLocalServer } from '../helpers/cli.js';
import { startPrivateKeyring, usePrivateKeyring } from '../helpers/keyring.js';

const local = useLocalServer(['--plan', 'pro', '--admin-token', 'local-admin']);
const ANY_KEY = /sk_[A-Za-z0-9]{64}/;
let config: ReturnType<typeof tempConfigDir>;
beforeEach(() => {
  config = tempConfigDir();
});
afterEach(() => config.remove());

const file = () => join(config.dir, 'config.json');
const saved = () => JSON.parse(readFileSync(file(), 'utf8')) as { profiles: Record<string, Record<string, unknown>> };
const account = (profile = 'default') => `${profile}@${file()}`;
const key = () => local.server.apiKey!;
/** svc with this test's config and server, no key in the environment, and the keyring's bus. */
const run = (args: string[], bus: string | undefined, extra: Record<string, string | undefined> = {}, input?: string) =>
  svc(args, { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: local.server.url, DBUS_SESSION_BUS_ADDRESS: bus, ...extra }, input === undefined ? {} : { input });
/** The Key: line of `svc status`. */
const keyLine = (stdout: string) => stdout.split('\n').find((line) => line.startsWith('Key:'));

describe('with an unlocked keyring', () => {
  const keyring = usePrivateKeyring();
  const bus = () => keyring().address;

  it('login --keyring keeps the key in the keyring; the config file records only where, and every command uses it', async () => {
    const login = await run(['login', '--with-key', '--keyring'], bus(), {}, key());
    expect(login.exitCode, login.stderr).toBe(0);
    expect(login.stderr).toContain(`saved to profile 'default' (its key in the OS keyring, the profile in ${file()})`);

    const text = readFileSync(file(), 'utf8');
    expect(text).not.toContain(key());
    expect(text).not.toMatch(ANY_KEY);
    expect(saved().profiles.default).toMatchObject({ keyring: { service: 'svc', account: account(), hint: keyHint(key()) } });
    expect(saved().profiles.default).not.toHaveProperty('apiKey');
    expect(await keyring().lookup(account())).toBe(key());

    const list = await run(['keys', 'list', '--json'], bus());
    expect(list.exitCode, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as { keys: { hint: string }[] }).keys.map((k) => k.hint)).toContain(keyHint(key()));

    const status = await run(['status'], bus());
    expect(status.exitCode, status.stderr).toBe(0);
    expect(keyLine(status.stdout)).toBe(`Key:        ${keyHint(key())} (from the profile, in the OS keyring)  ✓ valid`);
    const json = await run(['status', '--json'], bus());
    expect(JSON.parse(json.stdout).key).toEqual({ hint: keyHint(key()), source: 'profile', store: 'keyring', valid: true });

    const profiles = await run(['profile', 'list', '--json'], bus());
    expect(JSON.parse(profiles.stdout).profiles[0]).toMatchObject({ name: 'default', key: { hint: keyHint(key()), store: 'keyring' } });
  });

  it('status names the source in each state: the config file, the keyring, SVC_API_KEY', async () => {
    expect((await run(['login', '--with-key'], bus(), {}, key())).exitCode).toBe(0);
    const fromFile = await run(['status'], bus());
    expect(keyLine(fromFile.stdout)).toBe(`Key:        ${keyHint(key())} (from the profile, in the config file)  ✓ valid`);
    expect(JSON.parse((await run(['status', '--json'], bus())).stdout).key).toMatchObject({ source: 'profile', store: 'file' });

    const fromEnv = await run(['status'], bus(), { SVC_API_KEY: key() });
    expect(keyLine(fromEnv.stdout)).toBe(`Key:        ${keyHint(key())} (from SVC_API_KEY)  ✓ valid`);
    expect(JSON.parse((await run(['status', '--json'], bus(), { SVC_API_KEY: key() })).stdout).key).toMatchObject({ source: 'env', store: 'env' });

    // Logging in again keeps the key where the profile keeps it, until --keyring says otherwise.
    expect((await run(['login', '--with-key'], bus(), {}, key())).exitCode).toBe(0);
    expect(saved().profiles.default).toHaveProperty('apiKey', key());
    expect((await run(['login', '--with-key', '--keyring'], bus(), {}, key())).exitCode).toBe(0);
    expect(JSON.parse((await run(['status', '--json'], bus())).stdout).key).toMatchObject({ store: 'keyring', valid: true });
    expect((await run(['login', '--with-key'], bus(), {}, key())).exitCode).toBe(0);
    expect(saved().profiles.default).not.toHaveProperty('apiKey');
    // --no-keyring brings it back to the file and deletes the entry.
    expect((await run(['login', '--with-key', '--no-keyring'], bus(), {}, key())).exitCode).toBe(0);
    expect(saved().profiles.default).toHaveProperty('apiKey', key());
    expect(saved().profiles.default).not.toHaveProperty('keyring');
    expect(await keyring().lookup(account())).toBeNull();
  });

  it('profile move-key moves a key into the keyring and back, each place written before the other is cleared', async () => {
    expect((await run(['login', '--with-key', '--profile', 'work'], bus(), {}, key())).exitCode).toBe(0);
    const into = await run(['profile', 'move-key', 'work', '--to', 'keyring'], bus());
    expect(into.exitCode, into.stderr).toBe(0);
    expect(into.stderr).toBe(`✓ Moved ${keyHint(key())} of profile 'work' to the OS keyring (service 'svc', account '${account('work')}').`);
    expect(readFileSync(file(), 'utf8')).not.toMatch(ANY_KEY);
    expect(await keyring().lookup(account('work'))).toBe(key());
    expect((await run(['keys', 'list', '--profile', 'work'], bus())).exitCode).toBe(0);

    const again = await run(['profile', 'move-key', 'work', '--to', 'keyring', '--json'], bus());
    expect(again.exitCode).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ profile: 'work', key: { hint: keyHint(key()), store: 'keyring' }, moved: false });

    const out = await run(['profile', 'move-key', 'work', '--to', 'file'], bus());
    expect(out.exitCode, out.stderr).toBe(0);
    expect(saved().profiles.work).toHaveProperty('apiKey', key());
    expect(saved().profiles.work).not.toHaveProperty('keyring');
    expect(await keyring().lookup(account('work'))).toBeNull();
    expect((await run(['keys', 'list', '--profile', 'work'], bus())).exitCode).toBe(0);
  });

  it('logout and profile remove delete the keyring entry too', async () => {
    expect((await run(['login', '--with-key', '--keyring', '--profile', 'work'], bus(), {}, key())).exitCode).toBe(0);
    expect(await keyring().lookup(account('work'))).toBe(key());
    const logout = await run(['logout', '--profile', 'work'], bus());
    expect(logout.exitCode, logout.stderr).toBe(0);
    expect(await keyring().lookup(account('work'))).toBeNull();
    expect(saved().profiles.work ?? {}).not.toHaveProperty('keyring');

    expect((await run(['login', '--with-key', '--keyring', '--profile', 'old'], bus(), {}, key())).exitCode).toBe(0);
    const remove = await run(['profile', 'remove', 'old'], bus());
    expect(remove.exitCode, remove.stderr).toBe(0);
    expect(await keyring().lookup(account('old'))).toBeNull();
    expect(saved().profiles).not.toHaveProperty('old');
  });

  it('keys rotate --save puts the new key into the keyring of the profile that held the old one', async () => {
    const user = (await call(local.server.url, 'POST', '/_local/users', local.server.adminToken, {})).json as { apiKey: { id: string; secret: string } };
    expect((await run(['login', '--with-key', '--keyring'], bus(), {}, user.apiKey.secret)).exitCode).toBe(0);
    const rotate = await run(['keys', 'rotate', '--yes', user.apiKey.id, '--save'], bus());
    expect(rotate.exitCode, rotate.stderr).toBe(0);
    const fresh = rotate.stdout.match(ANY_KEY)![0];
    expect(await keyring().lookup(account())).toBe(fresh);
    expect(saved().profiles.default).toMatchObject({ keyring: { hint: keyHint(fresh) } });
    expect(readFileSync(file(), 'utf8')).not.toMatch(ANY_KEY);
    expect((await run(['keys', 'ping'], bus())).exitCode).toBe(0);
  });
});

describe('a locked keyring', () => {
  const keyring = usePrivateKeyring();

  it('is exit 3 with the reason and the fix, never a fall back to the file; SVC_API_KEY still works; logout says what it could not delete', async () => {
    const bus = keyring().address;
    expect((await run(['login', '--with-key', '--keyring'], bus, {}, key())).exitCode).toBe(0);
    await keyring().lock();
    const before = readFileSync(file(), 'utf8');

    const list = await run(['keys', 'list'], bus);
    expect(list.exitCode).toBe(3);
    expect(list.stderr).toContain(`error: Profile 'default' keeps its key in the OS keyring (service 'svc', account '${account()}'); svc does not look for it anywhere else.`);
    expect(list.stderr).toMatch(/The OS keyring is locked \(.*\)\.\nUnlock it/);
    expect(list.stderr).toContain('SVC_API_KEY still works meanwhile.');

    const status = await run(['status'], bus);
    expect(status.exitCode).toBe(3);
    expect(keyLine(status.stdout)).toMatch(new RegExp(`^Key: +${keyHint(key())} \\(from the profile, in the OS keyring\\)  ✗ Profile 'default' keeps its key`));
    // Said once (issue 39, 4): the block has the first line, stderr the rest.
    expect(status.stderr).not.toContain('keeps its key in the OS keyring');
    expect(status.stderr).toMatch(/^error: The OS keyring is locked \(.*\)\.\nUnlock it/);
    const json = JSON.parse((await run(['status', '--json'], bus)).stdout);
    expect(json.key).toEqual({ hint: keyHint(key()), source: 'profile', store: 'keyring', valid: null });
    expect(json.error).toMatchObject({ exitCode: 3 });
    expect(json.error).not.toHaveProperty('status');
    expect(json.error.message).toContain('The OS keyring is locked');

    expect((await run(['keys', 'list'], bus, { SVC_API_KEY: key() })).exitCode).toBe(0);

    const login = await run(['login', '--with-key', '--keyring'], bus, {}, key());
    expect(login.exitCode).toBe(3);
    expect(login.stderr).toContain("The key was not saved to profile 'default'");
    expect(login.stderr).toContain('nothing was changed');
    expect(readFileSync(file(), 'utf8')).toBe(before);

    const logout = await run(['logout'], bus);
    expect(logout.exitCode).toBe(3);
    expect(logout.stderr).not.toContain('✓');
    expect(logout.stderr).toContain(`Profile 'default' no longer points at ${keyHint(key())}, but the OS keyring still holds it.`);
    expect(logout.stderr).toContain(`svc could not delete it: The OS keyring is locked`);
    expect(logout.stderr).toContain(`secret-tool clear service svc username ${account()}`);
    expect(saved().profiles.default ?? {}).not.toHaveProperty('keyring');
  });
});

describe('a Secret Service that hangs while the bus answers', () => {
  const keyring = usePrivateKeyring();
  const bus = () => keyring().address;
  /** The kernel keyutils keys of this test's config, where the binding would fall back to (and lose the key at logout). */
  const kernelKeys = () => (existsSync('/proc/keys') ? readFileSync('/proc/keys', 'utf8').split('\n').filter((line) => line.includes(config.dir)) : []);
  /** `work` while gnome-keyring is stopped (SIGSTOP), and running again after, whatever happens. */
  const whileHung = async <T>(work: () => Promise<T>): Promise<T> => {
    keyring().hang();
    try {
      return await work();
    } finally {
      keyring().resume();
    }
  };

  it('login --keyring is exit 3 saying the keyring did not answer; nothing is saved, not to the kernel keyring either', async () => {
    expect((await run(['login', '--with-key', '--keyring', '--profile', 'kept'], bus(), {}, key())).exitCode).toBe(0);
    const before = readFileSync(file(), 'utf8');
    const login = await whileHung(() => run(['login', '--with-key', '--keyring', '--profile', 'fresh'], bus(), {}, key()));
    expect(login.exitCode, login.stderr).toBe(3);
    expect(login.stderr).not.toContain('✓');
    expect(login.stderr).toContain("The key was not saved to profile 'fresh'");
    expect(login.stderr).toContain('The keyring did not answer within 3 s');
    expect(readFileSync(file(), 'utf8')).toBe(before);
    expect(kernelKeys()).toEqual([]);
    expect(await keyring().lookup(account('fresh'))).toBeNull();
    expect(await keyring().lookup(account('kept'))).toBe(key());
  });

  it('move-key --to keyring is exit 3 saying the key was not moved; it stays in the config file', async () => {
    expect((await run(['login', '--with-key', '--profile', 'infile'], bus(), {}, key())).exitCode).toBe(0);
    const before = readFileSync(file(), 'utf8');
    const move = await whileHung(() => run(['profile', 'move-key', 'infile', '--to', 'keyring'], bus()));
    expect(move.exitCode, move.stderr).toBe(3);
    expect(move.stderr).not.toContain('✓');
    expect(move.stderr).toContain(`The key ${keyHint(key())} of profile 'infile' was not moved to the OS keyring`);
    expect(move.stderr).toContain('The keyring did not answer within 3 s');
    expect(readFileSync(file(), 'utf8')).toBe(before);
    expect(saved().profiles.infile).toHaveProperty('apiKey', key());
    expect(kernelKeys()).toEqual([]);
    expect(await keyring().lookup(account('infile'))).toBeNull();
  });

  it('SIGTERM while svc waits for it ends svc at once, by SIGTERM: the binding holds the event loop while it asks', async () => {
    expect((await run(['login', '--with-key', '--keyring'], bus(), {}, key())).exitCode).toBe(0);
    const watch = await keyring().watchCalls();
    try {
      const result = await whileHung(async () => {
        const child = run(['keys', 'list'], bus());
        await watch.called;
        child.kill('SIGTERM');
        return child;
      });
      expect(result.signal, result.stderr).toBe('SIGTERM');
      expect(result.stderr).toBe('');
    } finally {
      watch.stop();
    }
  });

  it('logout does not claim the entry was removed: exit 3 with the command that deletes it, and the entry is still in the Secret Service', async () => {
    expect((await run(['login', '--with-key', '--keyring', '--profile', 'kept'], bus(), {}, key())).exitCode).toBe(0);
    const logout = await whileHung(() => run(['logout', '--profile', 'kept'], bus()));
    expect(logout.exitCode, logout.stderr).toBe(3);
    expect(logout.stderr).not.toContain('✓');
    expect(logout.stderr).toContain(`Profile 'kept' no longer points at ${keyHint(key())}, but the OS keyring still holds it.`);
    expect(logout.stderr).toContain('svc could not delete it: The keyring did not answer within 3 s');
    expect(logout.stderr).toContain(`secret-tool clear service svc username ${account('kept')}`);
    // As C1 orders it: the profile forgets first, so it never points at a deleted entry.
    expect(saved().profiles.kept ?? {}).not.toHaveProperty('keyring');
    expect(kernelKeys()).toEqual([]);
    expect(await keyring().lookup(account('kept'))).toBe(key());
  });
});

describe('no keyring to be had', () => {
  const kernelKeys = () => (existsSync('/proc/keys') ? readFileSync('/proc/keys', 'utf8').split('\n').filter((line) => line.includes('@svc')) : []);

  it('no D-Bus session bus: login --keyring and a keyring profile are exit 3, and nothing goes to the kernel keyring instead', async () => {
    const nowhere = `unix:path=${join(config.dir, 'no-bus-here')}`;
    const kernelBefore = kernelKeys();
    const login = await run(['login', '--with-key', '--keyring'], nowhere, {}, key());
    expect(login.exitCode).toBe(3);
    expect(login.stderr).toContain(`The OS keyring cannot be reached: no D-Bus session bus answers at ${nowhere} (ENOENT)`);
    expect(login.stderr).toContain('nothing was changed');
    expect(existsSync(file()) ? saved().profiles : {}).toEqual({});
    expect(kernelKeys()).toEqual(kernelBefore);

    expect((await run(['login', '--with-key'], nowhere, {}, key())).exitCode).toBe(0);
    const before = readFileSync(file(), 'utf8');
    const move = await run(['profile', 'move-key', 'default', '--to', 'keyring'], nowhere);
    expect(move.exitCode).toBe(3);
    expect(move.stderr).toContain(`The key ${keyHint(key())} of profile 'default' was not moved to the OS keyring`);
    expect(move.stderr).toContain(`it is still in the config file ${file()}, and nothing was changed.`);
    expect(move.stderr).not.toContain('was not saved');
    expect(readFileSync(file(), 'utf8')).toBe(before);

    const unset = await run(['login', '--with-key', '--keyring'], undefined, {}, key());
    expect(unset.exitCode).toBe(3);
    expect(unset.stderr).toContain('no D-Bus session bus: DBUS_SESSION_BUS_ADDRESS is not set');
    expect(kernelKeys()).toEqual(kernelBefore);
  });

  it('a profile kept in the keyring, with the bus gone: exit 3 naming the address, and SVC_API_KEY still works', async () => {
    const keyring = await startPrivateKeyring();
    try {
      expect((await run(['login', '--with-key', '--keyring'], keyring.address, {}, key())).exitCode).toBe(0);
    } finally {
      await keyring.stop();
    }
    const list = await run(['keys', 'list'], keyring.address);
    expect(list.exitCode).toBe(3);
    expect(list.stderr).toContain(`no D-Bus session bus answers at ${keyring.address}`);
    expect(list.stderr).toContain('dbus-run-session');
    expect((await run(['keys', 'list'], keyring.address, { SVC_API_KEY: key() })).exitCode).toBe(0);
  });

  it('a bus without a Secret Service: exit 3 saying so', async () => {
    const bare = await startPrivateKeyring({ secretService: false });
    try {
      const login = await run(['login', '--with-key', '--keyring'], bare.address, {}, key());
      expect(login.exitCode).toBe(3);
      expect(login.stderr).toContain('The OS keyring cannot be reached: no Secret Service on the D-Bus session bus (Platform failure: DBus error: The name org.freedesktop.secrets was not provided by any .service files)');
      expect(login.stderr).toContain('Start a Secret Service');
    } finally {
      await bare.stop();
    }
  });
});

describe('a keyring service that was started but never unlocked', () => {
  it('login --keyring says the keyring is locked or has no default collection, and how to unlock or create it (exit 3)', async () => {
    const fresh = await startPrivateKeyring({ unlocked: false });
    try {
      const login = await run(['login', '--with-key', '--keyring'], fresh.address, {}, key());
      expect(login.exitCode).toBe(3);
      expect(login.stderr).toContain('The OS keyring is locked, or has no default collection to keep keys in');
      expect(login.stderr).toContain('gnome-keyring-daemon --replace --unlock --components=secrets');
      expect(login.stderr).not.toContain('The OS keyring refused');
      expect(existsSync(file()) ? saved().profiles : {}).toEqual({});
    } finally {
      await fresh.stop();
    }
  });
});

describe('svc installed without its optional keyring support', () => {
  const repo = dirname(dirname(SVC_BIN));
  let bare: string;
  beforeAll(() => {
    bare = mkdtempSync(join(tmpdir(), 'svc-no-keyring-'));
    for (const part of ['bin', 'dist', 'package.json']) cpSync(join(repo, part), join(bare, part), { recursive: true });
  });
  afterAll(() => rmSync(bare, { recursive: true, force: true }));
  const bareSvc = (args: string[], env: Record<string, string | undefined>, input?: string) =>
    execa('node', [join(bare, 'bin/svc.js'), ...args], {
      env: cleanEnv({ SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: local.server.url, ...env }),
      extendEnv: false,
      reject: false,
      ...(input === undefined ? { stdin: 'ignore' as const } : { input }),
    });

  it('login --keyring says keyring support is not installed and how to get it (exit 3); file and env keys work as ever, in CI too', async () => {
    const login = await bareSvc(['login', '--with-key', '--keyring'], {}, key());
    expect(login.exitCode).toBe(3);
    expect(login.stderr).toContain('Keyring support is not installed: svc could not load @napi-rs/keyring');
    // svc is in no registry: the advice installs the binding beside this svc, never a package named like it.
    expect(login.stderr).toContain(`svc runs from ${bare}: \`npm install --prefix ${bare} --no-save @napi-rs/keyring@2\``);
    expect(login.stderr).not.toMatch(/svc-cli(?!-\d)/);
    expect(existsSync(file()) ? saved().profiles : {}).toEqual({});

    expect((await bareSvc(['login', '--with-key'], { CI: 'true' }, key())).exitCode).toBe(0);
    expect((await bareSvc(['keys', 'list'], { CI: 'true' })).exitCode).toBe(0);
    expect((await bareSvc(['status'], { CI: 'true', SVC_API_KEY: key() })).exitCode).toBe(0);
    expect((await bareSvc(['logout'], { CI: 'true' })).exitCode).toBe(0);
  });
});
