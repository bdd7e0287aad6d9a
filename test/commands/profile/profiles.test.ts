// tier: in-process
/**
 * Profiles you can manage (issue 25, 4): `svc profile list|use|remove`, the
 * default profile kept in the config file, a profile that does not exist
 * named as such with those that do, and the manager's "Switch profile"
 * offering to make its choice the default.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { svc, tempConfigDir, useLocalServer } from '../../helpers/in-process.js';

const local = useLocalServer({ plan: 'pro' });
let config: ReturnType<typeof tempConfigDir>;
/** svc against the local server with this test's own config, and no key in the environment. */
const env = (extra: Record<string, string | undefined> = {}) => ({ SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: local.server.url, ...extra });
const file = () => join(config.dir, 'config.json');
const saved = () => JSON.parse(readFileSync(file(), 'utf8'));
const hint = () => `sk_${local.server.apiKey!.slice(3, 7)}…${local.server.apiKey!.slice(-4)}`;

async function login(profile: string) {
  const result = await svc(['login', '--with-key', '--profile', profile], env(), { input: local.server.apiKey! });
  expect(result.exitCode, result.stderr).toBe(0);
}

beforeEach(async () => {
  config = tempConfigDir();
  await login('work');
});
afterEach(() => config.remove());

describe('svc profile list', () => {
  it('piped: a header and a row a profile, with the default, the key hint and the server', async () => {
    const result = await svc(['profile', 'list'], env());
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout.split('\n')).toEqual([
      'PROFILE\tDEFAULT\tKEY\tSERVER',
      'default\tyes\t\thttp://127.0.0.1:8787',
      `work\tno\t${hint()}\t${local.server.url}`,
    ]);
  });

  it('on a terminal: the profile in use starred and said where it came from, and where keys are saved', async () => {
    const result = await svc(['profile', 'list', '--profile', 'work'], env(), { tty: true, columns: 120 });
    expect(result.stdout.split('\n')).toEqual([
      'PROFILE    DEFAULT  KEY           SERVER',
      '  default  yes      no key        http://127.0.0.1:8787 (local default)',
      `* work              ${hint()}  ${local.server.url}`,
    ]);
    expect(result.stderr).toBe(`* the profile svc uses here (--profile); saved in ${file()}`);
  });

  it('--json: one document with the default, the active profile and each profile', async () => {
    const result = await svc(['profile', 'list', '--json'], env());
    expect(JSON.parse(result.stdout)).toEqual({
      config: file(),
      default: 'default',
      active: 'default',
      activeFrom: 'default',
      activeFile: null,
      profiles: [
        { name: 'default', default: true, active: true, key: null, baseUrl: null, rotationPending: false },
        { name: 'work', default: false, active: false, key: { hint: hint(), store: 'file' }, baseUrl: local.server.url, rotationPending: false },
      ],
    });
  });

  it('at 40 columns leaves out the columns that do not fit', async () => {
    const result = await svc(['profile', 'list'], env(), { tty: true, columns: 40 });
    for (const line of result.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(40);
    expect(result.stdout).toContain(hint());
  });
});

describe('svc profile use', () => {
  it('makes the profile the default in the config file, for every command after; the file keeps what else it held', async () => {
    writeFileSync(file(), JSON.stringify({ ...saved(), team: { keep: 'me' } }));
    const use = await svc(['profile', 'use', 'work'], env());
    expect(use.exitCode, use.stderr).toBe(0);
    expect(use.stderr).toBe(`✓ Profile 'work' is now the default (saved in ${file()}).`);
    expect(saved()).toMatchObject({ defaultProfile: 'work', team: { keep: 'me' }, profiles: { work: { apiKey: local.server.apiKey } } });

    const status = await svc(['status', '--json'], env());
    expect(status.exitCode, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ profile: 'work', key: { source: 'profile', valid: true } });
    expect((await svc(['keys', 'list'], env())).exitCode).toBe(0);
    // --profile and SVC_PROFILE still win.
    expect(JSON.parse((await svc(['status', '--json', '--profile', 'default'], env())).stdout).profile).toBe('default');
    expect(JSON.parse((await svc(['status', '--json'], env({ SVC_PROFILE: 'default' }))).stdout).profile).toBe('default');

    const back = await svc(['profile', 'use', 'default', '--json'], env());
    expect(JSON.parse(back.stdout)).toEqual({ default: 'default', config: file() });
    expect(saved().defaultProfile).toBeUndefined();
    expect(saved().team).toEqual({ keep: 'me' });
  });

  it('says when SVC_PROFILE overrides the default just chosen', async () => {
    const result = await svc(['profile', 'use', 'work'], env({ SVC_PROFILE: 'default' }));
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain("! SVC_PROFILE is set to 'default' in this environment, and wins over the default.");
  });

  it('refuses a profile that does not exist (exit 2), naming those that do, and changes nothing', async () => {
    const before = readFileSync(file(), 'utf8');
    const result = await svc(['profile', 'use', 'wrok'], env());
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe(["error: Profile 'wrok' does not exist; the profiles are: default, work. Did you mean 'work'?", '`svc login --profile wrok` creates it with a key.'].join('\n'));
    expect(readFileSync(file(), 'utf8')).toBe(before);
  });

  it('a default profile that is not a string is refused with the file named', async () => {
    writeFileSync(file(), JSON.stringify({ ...saved(), defaultProfile: 7 }));
    const result = await svc(['keys', 'list'], env());
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`The config file ${file()} could not be read: its "defaultProfile" is a number`);
  });
});

describe('svc profile remove', () => {
  it('forgets the profile and its key; removing the default makes `default` the default again', async () => {
    await svc(['profile', 'use', 'work'], env());
    const result = await svc(['profile', 'remove', 'work'], env());
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toBe(
      [`✓ Removed profile 'work'; its key ${hint()} is not revoked.`, "'default' is the default profile again (`svc profile use NAME` changes it)."].join('\n'),
    );
    expect(saved()).toEqual({ profiles: {} });
    expect((await svc(['profile', 'remove', 'work'], env())).exitCode).toBe(2);
  });
});

describe('a profile that does not exist', () => {
  it('named by --profile: says so and lists those that do (exit 3)', async () => {
    const result = await svc(['--profile', 'nosuch', 'keys', 'list'], env());
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toBe(
      [
        "error: Profile 'nosuch' does not exist; the profiles are: default, work.",
        'Run `svc login --profile nosuch` to create it with a key, or set SVC_API_KEY.',
      ].join('\n'),
    );
  });

  it('a typo of a profile that exists gets a did-you-mean, spelled the way the name was given (issue 39, 6)', async () => {
    const flag = await svc(['--profile', 'wrok', 'keys', 'list'], env());
    expect(flag.exitCode).toBe(3);
    expect(flag.stderr.split('\n')[0]).toBe("error: Profile 'wrok' does not exist; the profiles are: default, work. Did you mean `--profile work`?");
    const fromEnv = await svc(['keys', 'list'], env({ SVC_PROFILE: 'Wrok' }));
    expect(fromEnv.stderr).toContain('Did you mean SVC_PROFILE=work?');
    const logout = await svc(['logout', '--profile', 'defualt'], env());
    expect(logout.stderr).toContain('Did you mean `--profile default`?');
    expect((await svc(['--profile', 'nosuch', 'keys', 'list'], env())).stderr).not.toContain('Did you mean');
    // status says in its block that the profile does not exist, and below it what there is instead.
    const status = await svc(['--profile', 'wrok', 'status'], env());
    expect(status.exitCode).toBe(3);
    expect(status.stdout).toContain("✗ none: profile 'wrok' does not exist");
    expect(status.stderr.split('\n')[0]).toBe('error: The profiles are: default, work. Did you mean `--profile work`?');
  });

  it('named by SVC_PROFILE or the default in the config: says which named it', async () => {
    const fromEnv = await svc(['keys', 'list'], env({ SVC_PROFILE: 'nosuch' }));
    expect(fromEnv.stderr).toContain("Profile 'nosuch' does not exist (SVC_PROFILE names it); the profiles are: default, work.");
    writeFileSync(file(), JSON.stringify({ ...saved(), defaultProfile: 'gone' }));
    // The config's default exists without a key, as `default` does.
    const fromConfig = await svc(['keys', 'list'], env());
    expect(fromConfig.exitCode).toBe(3);
    expect(fromConfig.stderr).toContain("Not logged in: no API key for profile 'gone'.");
  });

  it('status prints its block, the key line saying the profile does not exist (exit 3)', async () => {
    const result = await svc(['status', '--profile', 'nosuch'], env());
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toContain("Key:        ✗ none: profile 'nosuch' does not exist");
    const doc = JSON.parse((await svc(['status', '--profile', 'nosuch', '--json'], env())).stdout);
    expect(doc.error).toMatchObject({ exitCode: 3, message: expect.stringContaining("Profile 'nosuch' does not exist") });
  });

  it('logout from it is no success (exit 3) and changes nothing; logout from one without a key still is', async () => {
    const result = await svc(['logout', '--profile', 'nosuch'], env());
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toBe(["error: Profile 'nosuch' does not exist; the profiles are: default, work.", 'Nothing was changed (`svc profile list` shows each profile).'].join('\n'));
    const none = await svc(['logout'], env());
    expect(none.exitCode).toBe(0);
    expect(none.stderr).toBe("Not logged in: no API key for profile 'default'; nothing to remove.");
  });

  it('is no matter when SVC_API_KEY gives the key: the profile has nothing to add', async () => {
    const result = await svc(['--profile', 'nosuch', 'keys', 'list'], env({ SVC_API_KEY: local.server.apiKey! }));
    expect(result.exitCode, result.stderr).toBe(0);
  });
});
