// tier: process
/**
 * The config writer as only processes show it (docs/contract.md §C1): many
 * svc processes changing profiles at once lose nothing, a lock left by a
 * killed one is taken over, and a save on a full or read-only file system
 * fails with the file named and nothing changed. The store is built from
 * src/ into one CommonJS file so that plain `node -e` scripts can drive it;
 * logins and logouts run the built svc.
 */
import { execa, type ResultPromise } from 'execa';
import { build } from 'esbuild';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openConfig } from '../../src/cli/config/store.js';
import { call, svc, useLocalServer } from '../helpers/cli.js';
import { canMount, mountTmpfs, type Tmpfs } from '../helpers/tmpfs.js';

const PROCESSES = 20;
/** Twenty Node processes at once on two busy cores take seconds, not the 20 s default's fraction. */
const SLOW = 120_000;

const work = mkdtempSync(join(tmpdir(), 'svc-config-writer-'));
/** The HOME of every child: nothing a test runs may touch the real one. */
const home = join(work, 'home');
const storeBundle = join(work, 'store.cjs');
let configs = 0;
/** A fresh, empty SVC_CONFIG_DIR. */
const freshConfigDir = () => join(work, `config-${++configs}`);

beforeAll(async () => {
  mkdirSync(home);
  await build({ entryPoints: ['src/cli/config/store.ts'], outfile: storeBundle, bundle: true, format: 'cjs', platform: 'node', target: 'node20.18', logLevel: 'warning' });
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A plain Node process running `script` with the built store as `store`, and `args` as `argv`. */
function node(script: string, ...args: string[]): ResultPromise<{ reject: false; env: Record<string, string> }> {
  const code = `const store = require(${JSON.stringify(storeBundle)}); const argv = process.argv.slice(1);\n${script}`;
  return execa('node', ['-e', code, ...args], { reject: false, env: { HOME: home } });
}

const readConfig = (dir: string) => JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as { profiles: Record<string, { apiKey?: string; baseUrl?: string }> };
const count = (url: string | undefined) => Number(url?.split('/').pop() ?? 0);

describe(`${PROCESSES} processes changing profiles at once`, () => {
  // Each process bumps a counter in a profile of its own and in one they all share, many times over.
  // The shared counter is the strictest test: every change reads what the previous one wrote.
  // They start together: each says it is ready, then waits for the go file.
  const BUMPS = 10;
  const bumper = `
    const [dir, name, bumps, go] = argv;
    const config = store.openConfig({ SVC_CONFIG_DIR: dir }, () => {}, { lockWaitMs: 60000 });
    const bump = (profile, host) => ({ ...profile, baseUrl: 'http://' + host + '/' + (Number((profile.baseUrl || '/0').split('/').pop()) + 1) });
    console.log('ready');
    while (!require('node:fs').existsSync(go)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    (async () => {
      for (let i = 0; i < Number(bumps); i++) {
        await config.update(name, (profile) => bump(profile, 'own.test'));
        await config.update('shared', (profile) => bump(profile, 'shared.test'));
      }
    })();`;

  /** Starts the bumpers, lets them go at once, and waits for them all. */
  async function bumpTogether(dir: string) {
    const go = join(work, `go-${++configs}`);
    const runs = Array.from({ length: PROCESSES }, (_, i) => node(bumper, dir, `p${i + 1}`, String(BUMPS), go));
    await Promise.all(runs.map((run) => new Promise((resolve) => run.stdout!.once('data', resolve))));
    writeFileSync(go, '');
    for (const run of await Promise.all(runs)) expect(run.exitCode, run.stderr).toBe(0);
  }

  function expectEveryBump(dir: string) {
    const { profiles } = readConfig(dir);
    expect(count(profiles.shared?.baseUrl)).toBe(PROCESSES * BUMPS);
    for (let i = 1; i <= PROCESSES; i++) expect(count(profiles[`p${i}`]?.baseUrl), `p${i}`).toBe(BUMPS);
    expect(readdirSync(dir)).toEqual(['config.json']);
  }

  it('lose no change, round after round', async () => {
    for (let round = 0; round < 2; round++) {
      const dir = freshConfigDir();
      await bumpTogether(dir);
      expectEveryBump(dir);
    }
  }, SLOW);

  it('take over the lock of a process killed while it held it, one of them at a time', async () => {
    for (let round = 0; round < 3; round++) {
      const dir = freshConfigDir();
      // Holds the lock for ever: its change never returns, until it is killed.
      const holder = node(`store.openConfig({ SVC_CONFIG_DIR: argv[0] }, () => {}).update('stuck', () => { console.log('locked'); for (;;); });`, dir);
      await new Promise((resolve) => holder.stdout!.once('data', resolve));
      expect(readFileSync(join(dir, 'config.json.lock'), 'utf8')).toMatch(new RegExp(`^${holder.pid} [0-9a-f]{32} \\d+\\n$`));
      holder.kill('SIGKILL');
      expect((await holder).signal).toBe('SIGKILL');

      // Every process finds the dead holder's lock at once; only the dead one may be removed.
      await bumpTogether(dir);
      expectEveryBump(dir);
      expect(readConfig(dir).profiles.stuck).toBeUndefined();
    }
  }, SLOW);
});

describe('svc killed (SIGKILL) while it writes (issue 37)', () => {
  // 300 profiles make each write long enough for kills to land inside it, at whatever point.
  const writer = `
    const [dir] = argv;
    const config = store.openConfig({ SVC_CONFIG_DIR: dir }, () => {}, { lockWaitMs: 60000 });
    (async () => {
      for (let i = 0; ; i++) {
        await config.update('p' + (i % 300), (profile) => ({ ...profile, baseUrl: 'http://w.test/' + i }));
        console.log(i);
      }
    })();`;

  it('leaves a file that parses after every kill, and the next save takes the lock over and clears what the killed one left', async () => {
    const dir = freshConfigDir();
    const seed = openConfig({ SVC_CONFIG_DIR: dir }, () => {});
    for (let i = 0; i < 300; i++) await seed.update(`p${i}`, () => ({ baseUrl: `http://w.test/${'x'.repeat(100)}` }));
    for (let kill = 0; kill < 15; kill++) {
      const run = node(writer, dir);
      // Killed after a different number of saves each time: the moment inside a write varies with it.
      await new Promise<void>((resolve) => {
        let lines = 0;
        run.stdout!.on('data', (chunk: Buffer) => {
          lines += chunk.toString().split('\n').length - 1;
          if (lines > kill % 4) resolve();
        });
      });
      run.kill('SIGKILL');
      expect((await run).signal).toBe('SIGKILL');
      expect(Object.keys(readConfig(dir).profiles), `after kill ${kill}`).toHaveLength(300);
    }
    await openConfig({ SVC_CONFIG_DIR: dir }, () => {}, { lockWaitMs: 60_000 }).update('after', () => ({ baseUrl: 'http://after.test' }));
    expect(readConfig(dir).profiles.after).toEqual({ baseUrl: 'http://after.test' });
    expect(readdirSync(dir)).toEqual(['config.json']);
  }, SLOW);
});

describe('a FIFO where the config file or its lock goes (issue 37)', () => {
  it('config.json: every command stops at once naming it, none waits, none changes its mode', async () => {
    const dir = freshConfigDir();
    mkdirSync(dir, { mode: 0o700 });
    const file = join(dir, 'config.json');
    await execa('mkfifo', ['-m', '0644', file]);
    for (const args of [['status'], ['keys', 'list'], ['login', '--with-key']]) {
      const run = await svc(args, { SVC_CONFIG_DIR: dir, HOME: home }, { input: '' });
      expect(run.timedOut).toBe(false);
      expect(run.exitCode, run.stderr).toBe(1);
      expect(run.stderr).toContain(`The config file ${file} is a FIFO (named pipe), not a regular file.`);
      expect(run.stderr).not.toContain('readable by other users');
    }
    expect(statSync(file).mode & 0o777).toBe(0o644);
  });

  it('config.json.lock: a change is refused as a lock svc did not make, not waited on for ever', async () => {
    const dir = freshConfigDir();
    await openConfig({ SVC_CONFIG_DIR: dir }, () => {}).update('default', () => ({ baseUrl: 'http://a.test' }));
    await execa('mkfifo', [join(dir, 'config.json.lock')]);
    const run = await svc(['profile', 'use', 'default'], { SVC_CONFIG_DIR: dir, HOME: home });
    expect(run.timedOut).toBe(false);
    expect(run.stderr).toContain(`${join(dir, 'config.json.lock')} is there, and it is not a lock svc made`);
  });
});

const local = useLocalServer(['--plan', 'pro']);

describe(`${PROCESSES} svc logins and 5 logouts at once, each to its own profile (issue 22)`, () => {
  // Ten rounds of 25 processes came within seconds of the 120 s budget on two loaded cores; five keep a margin.
  const ROUNDS = 5;

  it('leave every login saved and every logout done, in every round', async () => {
    const { url, apiKey } = local.server;
    for (let round = 0; round < ROUNDS; round++) {
      const dir = freshConfigDir();
      const config = openConfig({ SVC_CONFIG_DIR: dir }, () => {});
      for (let i = 1; i <= 5; i++) await config.update(`q${i}`, () => ({ apiKey: apiKey!, baseUrl: url }));
      const env = { SVC_CONFIG_DIR: dir, HOME: home };
      const [logins, logouts] = await Promise.all([
        Promise.all(Array.from({ length: PROCESSES }, (_, i) => svc(['login', '--with-key', '--profile', `p${i + 1}`, '--base-url', url], env, { input: apiKey! }))),
        Promise.all(Array.from({ length: 5 }, (_, i) => svc(['logout', '--profile', `q${i + 1}`], env))),
      ]);
      for (const [runs, said] of [
        [logins, (i: number) => `saved to profile 'p${i + 1}'`],
        [logouts, (i: number) => `from profile 'q${i + 1}'`],
      ] as const) {
        runs.forEach((run, i) => {
          expect(run.exitCode, `round ${round}: ${run.stderr}`).toBe(0);
          expect(run.stderr).toContain(said(i));
        });
      }

      const { profiles } = readConfig(dir);
      for (let i = 1; i <= PROCESSES; i++) expect(profiles[`p${i}`], `round ${round}: p${i}`).toMatchObject({ apiKey, baseUrl: url });
      for (let i = 1; i <= 5; i++) expect(profiles[`q${i}`], `round ${round}: q${i}`).toEqual({ baseUrl: url });
    }
  }, SLOW);
});

describe('svc keys rotate --save beside 10 logins to other profiles (issue 22)', () => {
  it('leaves the profile holding the new key whenever it says it saved it, and loses no login', async () => {
    const { url, apiKey } = local.server;
    for (let round = 0; round < 5; round++) {
      const dir = freshConfigDir();
      const created = await call(url, 'POST', '/api/service/user/api-keys', apiKey, { name: `main-${round}` });
      expect(created.status, created.text).toBe(201);
      await openConfig({ SVC_CONFIG_DIR: dir }, () => {}).update('main', () => ({ apiKey: created.json.secret, baseUrl: url }));
      const env = { SVC_CONFIG_DIR: dir, HOME: home };
      const [rotate, ...logins] = await Promise.all([
        svc(['keys', 'rotate', '--yes', created.json.id, '--save', '--profile', 'main'], env),
        ...Array.from({ length: 10 }, (_, i) => svc(['login', '--with-key', '--profile', `p${i + 1}`, '--base-url', url], env, { input: apiKey! })),
      ]);
      expect(rotate!.exitCode, `round ${round}: ${rotate!.stderr}`).toBe(0);
      expect(rotate!.stderr).toContain("Saved the new key to profile 'main'");
      const { profiles } = readConfig(dir);
      expect(profiles.main?.apiKey, `round ${round}`).toBe(rotate!.stdout);
      for (const run of logins) expect(run.exitCode, `round ${round}: ${run.stderr}`).toBe(0);
      for (let i = 1; i <= 10; i++) expect(profiles[`p${i}`]?.apiKey, `round ${round}: p${i}`).toBe(apiKey);
      const ping = await svc(['keys', 'ping', '--quiet', '--profile', 'main'], env);
      expect(ping.exitCode, ping.stderr).toBe(0);
    }
  }, SLOW);
});

describe.skipIf(!canMount)('a save on a file system that cannot take it (needs root to mount a tmpfs; skipped when not root)', () => {
  let mount: Tmpfs | undefined;
  afterEach(() => mount?.unmount());

  /** A config dir on a fresh tmpfs, holding a saved profile with enough in it to need two pages. */
  async function configOnTmpfs() {
    mount = mountTmpfs('256k');
    const dir = join(mount.dir, 'svc');
    const config = openConfig({ SVC_CONFIG_DIR: dir }, () => {});
    await config.update('default', () => ({ apiKey: local.server.apiKey!, baseUrl: `${local.server.url}/${'x'.repeat(6000)}` }));
    return { dir, file: config.path, before: readFileSync(config.path, 'utf8') };
  }

  async function expectLoginRefused(dir: string, file: string, before: string, cause: string) {
    const run = await svc(['login', '--with-key', '--profile', 'new', '--base-url', local.server.url], { SVC_CONFIG_DIR: dir, HOME: home }, { input: local.server.apiKey! });
    expect(run.exitCode, run.stderr).toBe(1);
    expect(run.stderr).toContain(`Could not save profile 'new' to ${file}: ${cause}. Nothing was changed; the file holds what it held before. SVC_CONFIG_DIR chooses`);
    expect(run.stderr).not.toMatch(/Unexpected|✓/);
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(readdirSync(dir).filter((name) => name !== 'config.json')).toEqual([]);
  }

  it('full, with not a byte left: the lock cannot be made', async () => {
    const { dir, file, before } = await configOnTmpfs();
    mount!.fill();
    await expectLoginRefused(dir, file, before, `its lock file ${file}.lock could not be made: no space left on the device (ENOSPC)`);
  });

  it('with SNAP set (svc from a snap), 300 profiles and one free page: `svc profile use` loses none of them (issue 37)', async () => {
    mount = mountTmpfs('512k');
    const dir = join(mount.dir, 'svc');
    mkdirSync(dir, { mode: 0o700 });
    const profiles = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`p${i + 1}`, { apiKey: local.server.apiKey!, baseUrl: local.server.url }]));
    const file = join(dir, 'config.json');
    // Padded to end just short of a page: the new file, a default profile longer, needs one page more.
    const unpadded = JSON.stringify({ note: '', profiles }, undefined, '\t').length;
    const note = 'x'.repeat(Math.ceil(unpadded / 4096) * 4096 - 10 - unpadded);
    writeFileSync(file, JSON.stringify({ note, profiles }, undefined, '\t'), { mode: 0o600 });
    const before = readFileSync(file, 'utf8');
    // One page for the lock, none for the new file.
    const spare = join(mount.dir, 'spare');
    writeFileSync(spare, Buffer.alloc(4096));
    mount.fill();
    rmSync(spare);
    const run = await svc(['profile', 'use', 'p3'], { SVC_CONFIG_DIR: dir, HOME: home, SNAP: '/snap/node/current' });
    expect(run.exitCode, run.stderr).toBe(1);
    expect(run.stderr).toContain(`Could not save profile 'p3' to ${file}: no space left on the device (ENOSPC). Nothing was changed; the file holds what it held before.`);
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(Object.keys(readConfig(dir).profiles)).toHaveLength(300);
    expect(readdirSync(dir)).toEqual(['config.json']);
    // With room again, the same command works, and the file is still whole.
    mount.free();
    const again = await svc(['profile', 'use', 'p3'], { SVC_CONFIG_DIR: dir, HOME: home, SNAP: '/snap/node/current' });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(Object.keys(readConfig(dir).profiles)).toHaveLength(300);
  });

  it('nearly full, with room for the lock and part of the new file: the part is not renamed into place', async () => {
    const { dir, file, before } = await configOnTmpfs();
    // Two pages kept aside, then given back once the rest is full: one for the lock, one for the
    // first 4 KiB of the new file, which is cut short there.
    const spare = join(mount!.dir, 'spare');
    writeFileSync(spare, Buffer.alloc(8192));
    mount!.fill();
    rmSync(spare);
    await expectLoginRefused(dir, file, before, 'no space left on the device (ENOSPC)');
  });

  it('read-only', async () => {
    const { dir, file, before } = await configOnTmpfs();
    mount!.readOnly();
    await expectLoginRefused(dir, file, before, `its lock file ${file}.lock could not be made: the file system is read-only (EROFS)`);
  });
});
