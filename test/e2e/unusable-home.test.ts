// tier: process
/**
 * docs/contract.md §C1: svc with a key from SVC_API_KEY and no usable home,
 * as CI runners and containers have it: read-only, missing, unset, another
 * user's. Nothing needs saving, so nothing is made and nothing fails; a
 * save that cannot be made names its cause and SVC_CONFIG_DIR. Runs the
 * built svc, as root and as `nobody` (setpriv), on real file systems.
 */
import { execa } from 'execa';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, SVC_BIN, useLocalServer } from '../helpers/cli.js';
import { HOME_VARS } from '../helpers/home.js';
import { svcForOtherUsers } from '../helpers/other-user.js';
import { canMount, mountTmpfs, type Tmpfs } from '../helpers/tmpfs.js';

// Many requests in a few seconds: a plan whose rate limit they stay under.
const local = useLocalServer(['--plan', 'pro']);
const work = mkdtempSync(join(tmpdir(), 'svc-unusable-home-'));
// Readable by `nobody`, as a runner's workspace is by its user.
chmodSync(work, 0o755);
const asRoot = process.getuid?.() === 0;
// The clone itself may be where `nobody` cannot go (under /root).
const forNobody = asRoot ? svcForOtherUsers(work) : undefined;
let keyId: string;
beforeAll(async () => {
  const created = await call(local.server.url, 'POST', '/api/service/user/api-keys', local.server.apiKey, { name: 'viewed' });
  keyId = created.json.id;
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

const NOBODY = 65534;

/** The built svc with SVC_API_KEY and only the HOME given (none when undefined), as root or as `nobody`. */
function run(args: string[], home: string | undefined, options: { uid?: number; env?: Record<string, string> } = {}) {
  const env: Record<string, string | undefined> = { PATH: process.env.PATH, SVC_API_KEY: local.server.apiKey!, SVC_BASE_URL: local.server.url, ...options.env };
  for (const name of HOME_VARS) env[name] = undefined;
  // The test setup refuses a child without HOME (it would use the real one): it is taken away in the child itself.
  env.HOME = home ?? work;
  const [node, svc] = options.uid === undefined ? ['node', SVC_BIN] : [forNobody!.node, forNobody!.svc];
  const svcCommand = [...(home === undefined ? ['env', '-u', 'HOME'] : []), node, svc, ...args];
  const command = options.uid === undefined ? svcCommand : ['setpriv', `--reuid=${options.uid}`, `--regid=${options.uid}`, '--clear-groups', ...svcCommand];
  return execa(command[0]!, command.slice(1), { env, extendEnv: false, reject: false, stdin: 'ignore', timeout: 30_000 });
}

const READING = () => [['status'], ['keys', 'list'], ['keys', 'ping'], ['keys', 'view', keyId], ['api', '/user/api-keys'], ['profile', 'list']];

async function expectAllWork(home: string | undefined, uid?: number) {
  for (const args of READING()) {
    const result = await run(args, home, { uid });
    expect(result.exitCode, `${args.join(' ')}: ${result.stderr || result.message}`).toBe(0);
    expect(result.stderr).not.toMatch(/Unexpected|config directory/);
  }
}

describe('SVC_API_KEY without a usable home (issue 37)', () => {
  it('a home that does not exist: every command works, and nothing is made there (no config, no compile cache)', async () => {
    const home = join(work, 'missing');
    await expectAllWork(home);
    expect(existsSync(home)).toBe(false);
  });

  it('an existing home: a command that saves nothing makes no ~/.config/svc', async () => {
    const home = join(work, 'plain');
    mkdirSync(home);
    await expectAllWork(home);
    expect(existsSync(join(home, '.config'))).toBe(false);
  });

  describe.skipIf(!asRoot)('as another user (needs root for setpriv; skipped when not root)', () => {
    it("another user's home, closed to this one (mode 0700): every command works", async () => {
      const home = join(work, 'foreign-closed');
      mkdirSync(home, { mode: 0o700 });
      await expectAllWork(home, NOBODY);
    });

    it("another user's home, open to read: every command works, and nothing is made in it", async () => {
      const home = join(work, 'foreign-open');
      mkdirSync(home, { mode: 0o755 });
      await expectAllWork(home, NOBODY);
      expect(existsSync(join(home, '.config'))).toBe(false);
    });

    it("HOME unset, for a user whose passwd home does not exist (nobody's /nonexistent): every command works", async () => {
      await expectAllWork(undefined, NOBODY);
    });

    it('a save there names the real cause and SVC_CONFIG_DIR', async () => {
      const home = join(work, 'foreign-login');
      mkdirSync(home, { mode: 0o755 });
      const result = await execa('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', forNobody!.node, forNobody!.svc, 'login', '--with-key', '--base-url', local.server.url], {
        env: { PATH: process.env.PATH, HOME: home },
        extendEnv: false,
        reject: false,
        input: local.server.apiKey!,
      });
      expect(result.exitCode, result.stderr).toBe(1);
      expect(result.stderr).toContain(`its directory ${join(home, '.config', 'svc')} could not be made: permission denied (EACCES)`);
      expect(result.stderr).toContain('SVC_CONFIG_DIR chooses another directory for the profiles.');
    });
  });

  describe.skipIf(!canMount)('a read-only home (needs root to mount a tmpfs; skipped when not root)', () => {
    let mount: Tmpfs | undefined;
    afterEach(() => mount?.unmount());

    it('every command works; a save names EROFS, not a directory that "no longer exists"', async () => {
      mount = mountTmpfs('1m');
      mount.readOnly();
      await expectAllWork(mount.dir);
      const login = await execa('node', [SVC_BIN, 'login', '--with-key', '--base-url', local.server.url], {
        env: { PATH: process.env.PATH, HOME: mount.dir },
        extendEnv: false,
        reject: false,
        input: local.server.apiKey!,
      });
      expect(login.exitCode, login.stderr).toBe(1);
      expect(login.stderr).toContain(`could not be made: the file system is read-only (EROFS)`);
      expect(login.stderr).toContain('SVC_CONFIG_DIR');
    });
  });

  it('an empty SVC_API_KEY, as a pull request from a fork gets it, is named as empty', async () => {
    const home = join(work, 'empty-key');
    const result = await run(['keys', 'list'], home, { env: { SVC_API_KEY: '' } });
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain("Not logged in: no API key for profile 'default', and SVC_API_KEY is set but empty");
  });
});
