// tier: in-process
/**
 * docs/contract.md §C10, "nothing is required of HOME when nothing needs
 * saving" (issue 46): a command that only reads makes nothing, changes
 * nothing and takes no lock, where the config would be (a directory that
 * does not exist yet, as under a service account's /nonexistent home) and
 * where it is (a saved profile). The compile cache is bin/svc.js's, and
 * test/e2e/unusable-home.test.ts checks it with the built svc.
 */
import { lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { svc, tempConfigDir, useLocalServer } from '../helpers/in-process.js';

const local = useLocalServer({ plan: 'pro' });
let keyId: string;
beforeAll(async () => {
  keyId = (JSON.parse((await svc(['keys', 'create', 'looked-at', '--json'], local.env)).stdout) as { key: { id: string } }).key.id;
});

/** Every read-only command, with its arguments; the exit code is not the point (audit may find a key to report). */
const READS = (): string[][] => [
  ['status'],
  ['status', '--json'],
  ['keys', 'list'],
  ['keys', 'list', '--json', '--status', 'enabled'],
  ['keys', 'view', keyId],
  ['keys', 'ping'],
  ['keys', 'audit', '--require-expiry'],
  ['keys', 'prune', '--expired', '--dry-run'],
  ['api', '/user/api-keys'],
  ['profile', 'list'],
  ['profile', 'list', '--json'],
  ['help', 'environment'],
  ['--version'],
];

/** Each entry under `root`: its kind, mode, size, inode and modification time, which any write changes. */
function tree(root: string): Record<string, string> {
  const seen: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const stats = lstatSync(path);
      seen[path.slice(root.length)] = `${stats.mode.toString(8)} ${stats.size} ${stats.ino} ${stats.mtimeMs}`;
      if (stats.isDirectory()) walk(path);
    }
  };
  walk(root);
  return seen;
}

let root: ReturnType<typeof tempConfigDir>;
beforeEach(() => (root = tempConfigDir()));
afterEach(() => root.remove());

describe('a read-only command makes and changes nothing (issue 46)', () => {
  it.each([
    ['SVC_CONFIG_DIR names a directory that does not exist', () => ({ SVC_CONFIG_DIR: join(root.dir, 'missing', 'svc') })],
    ['XDG_CONFIG_HOME under a home that does not exist', () => ({ SVC_CONFIG_DIR: undefined, XDG_CONFIG_HOME: join(root.dir, 'nonexistent', '.config') })],
  ])('%s: not a directory or file is made, with the key from SVC_API_KEY or none at all', async (_, where) => {
    for (const key of [{ SVC_API_KEY: local.server.apiKey! }, { SVC_API_KEY: undefined }]) {
      for (const args of READS()) {
        await svc(args, { ...local.env, ...key, ...where() });
        expect(readdirSync(root.dir), args.join(' ')).toEqual([]);
      }
    }
  });

  it('a saved profile: its directory is as it was after each, no lock file, no temp file, the config file not rewritten', async () => {
    const dir = join(root.dir, 'svc');
    mkdirSync(dir, { mode: 0o700 });
    const env = { ...local.env, SVC_CONFIG_DIR: dir, SVC_API_KEY: undefined };
    const login = await svc(['login', '--with-key', '--base-url', local.server.url], env, { input: local.server.apiKey! });
    expect(login.exitCode, login.stderr).toBe(0);
    const before = tree(root.dir);
    expect(Object.keys(before)).toEqual(['/svc', '/svc/config.json']);
    for (const args of READS()) {
      const result = await svc(args, env);
      expect(result.stderr, args.join(' ')).not.toMatch(/Could not|Refusing/);
      expect(tree(root.dir), args.join(' ')).toEqual(before);
    }
  });
});
