// tier: in-process
/**
 * The key-health step remembers the profile key's expiry from a key list
 * (docs/contract.md §C8). That is a cache written after the command did its
 * work: it is written only when the expiry changed, and a failure to write
 * it is a warning on stderr, never a failed command. A 401 for a saved key
 * whose remembered expiry has passed on the server's clock says so, and
 * when (issue 39, 6).
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { call, startLocalServer, svc, tempConfigDir, useLocalServer, type LocalServer } from '../helpers/in-process.js';

const local = useLocalServer({ plan: 'pro' });
let config: ReturnType<typeof tempConfigDir>;
const file = () => join(config.dir, 'config.json');
/** The key and the address from the profile alone, as after `svc login`. */
const env = () => ({ SVC_CONFIG_DIR: config.dir });
/** A directory where the config writer makes its lock file: every save fails at once, whoever runs the tests (root too). */
const blockSaves = () => mkdirSync(`${file()}.lock`);

beforeEach(() => {
  config = tempConfigDir();
  writeFileSync(file(), JSON.stringify({ profiles: { default: { apiKey: local.server.apiKey, baseUrl: local.server.url } } }), { mode: 0o600 });
});
afterEach(() => config.remove());

describe("remembering the key's expiry", () => {
  it('a save that fails is a warning: the command still succeeds, prints its output and exits 0', async () => {
    const before = readFileSync(file(), 'utf8');
    blockSaves();
    const result = await svc(['keys', 'list', '--json'], env());
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).keys.length).toBeGreaterThan(0);
    expect(result.stderr).toContain("The key's expiry was not remembered in profile 'default'.");
    expect(result.stderr).toContain(`Could not save profile 'default' to ${file()}`);
    expect(readFileSync(file(), 'utf8')).toBe(before);
  });

  it('is written once; a command that finds it unchanged writes nothing', async () => {
    const first = await svc(['keys', 'list', '--json'], env());
    expect(first.exitCode, first.stderr).toBe(0);
    const remembered = JSON.parse(readFileSync(file(), 'utf8')).profiles.default.keyExpiry;
    expect(remembered).toMatchObject({ id: expect.stringMatching(/^key_/), expiresAt: null });
    const written = statSync(file());
    blockSaves();
    const again = await svc(['keys', 'list', '--json'], env());
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).toBe('');
    expect(statSync(file()).mtimeMs).toBe(written.mtimeMs);
    expect(statSync(file()).ino).toBe(written.ino);
  });

  it('the same expiry with its fields in another order is no change', async () => {
    await svc(['keys', 'list', '--json'], env());
    const { hint, id, expiresAt } = JSON.parse(readFileSync(file(), 'utf8')).profiles.default.keyExpiry;
    writeFileSync(file(), JSON.stringify({ profiles: { default: { apiKey: local.server.apiKey, baseUrl: local.server.url, keyExpiry: { expiresAt, id, hint } } } }), { mode: 0o600 });
    blockSaves();
    const again = await svc(['keys', 'list', '--json'], env());
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).toBe('');
  });
});

describe('a saved key past the expiry its profile remembered', () => {
  /**
   * A server of its own, and a key of it that expires in an hour saved in
   * the profile (its expiry remembered by a key list), for `check` to use.
   */
  async function withShortLivedKey(check: (ctx: { server: LocalServer; saved: Record<string, string>; id: string; expiresAt: string }) => Promise<void>) {
    const server = await startLocalServer();
    try {
      const saved = { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: server.url };
      const made = await svc(['keys', 'create', 'short-lived', '--expires-in', '1h', '--json'], { ...saved, SVC_API_KEY: server.apiKey! });
      const { id, secret, expiresAt } = JSON.parse(made.stdout).key;
      expect((await svc(['login', '--with-key'], saved, { input: secret })).exitCode).toBe(0);
      expect((await svc(['keys', 'list', '--json'], saved)).exitCode).toBe(0);
      await check({ server, saved, id, expiresAt });
    } finally {
      await server.stop();
    }
  }

  it('a 401 says the saved key expired, and when, instead of the generic 401', () =>
    withShortLivedKey(async ({ server, saved, expiresAt }) => {
      expect(JSON.parse(readFileSync(file(), 'utf8')).profiles.default.keyExpiry.expiresAt).toBe(new Date(expiresAt).toISOString());
      // Only the server's clock moves: expiry is told by the clock of the server that refused the key.
      await call(server.url, 'POST', '/_local/clock', server.adminToken, { advanceSeconds: 7_200 });
      const result = await svc(['keys', 'list'], saved);
      expect(result.exitCode).toBe(3);
      const lines = result.stderr.split('\n');
      expect(lines[0]).toBe(`error: Authentication failed (401): your saved key expired on ${new Date(expiresAt).toISOString().slice(0, 16).replace('T', ' ')} UTC.`);
      expect(result.stderr).not.toContain('unknown, disabled, expired or revoked');
      expect(lines.at(-1)).toMatch(/^Next: run `svc login` with a working key/);
    }));

  it('a key refused before its expiry on the server\'s clock gets the generic 401, whatever our clock says', () =>
    withShortLivedKey(async ({ server, saved, id }) => {
      expect((await svc(['keys', 'revoke', id, '--yes'], { ...saved, SVC_API_KEY: server.apiKey! })).exitCode).toBe(0);
      const result = await svc(['keys', 'list'], saved, { deps: { now: () => Date.now() + 7_200_000 } });
      expect(result.exitCode).toBe(3);
      expect(result.stderr).not.toContain('your saved key expired');
      expect(result.stderr).toContain('The key is unknown, disabled, expired or revoked.');
    }));
});
