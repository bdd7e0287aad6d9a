// tier: in-process
/**
 * Issue 25's loose ends: methods `svc api` sends, `--quiet` on a new key,
 * one wording per state, help's defaults, an empty `login --with-key`, a
 * bare word that is an option's name.
 */
import { describe, expect, it } from 'vitest';
import { svc, tempConfigDir, useLocalServer } from '../helpers/in-process.js';

const local = useLocalServer();

describe('a bare word that names an option', () => {
  it.each([
    [['version'], "Did you mean 'svc --version'?"],
    [['keys', 'json'], "Did you mean 'svc keys --json'?"],
  ])('svc %j is pointed at the option (exit 2)', async (args, hint) => {
    const result = await svc(args, {});
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe(`error: unknown command '${args.at(-1)}'\n${hint}\nSee '${['svc', ...args.slice(0, -1)].join(' ')} --help'.`);
  });
});

describe('--quiet on a new key: the data alone', () => {
  const SECRET = /^sk_[A-Za-z0-9]{64}$/;

  it('keys create --quiet prints the secret alone, piped or on a terminal, and no warning', async () => {
    for (const tty of [false, true]) {
      const result = await svc(['keys', 'create', `quiet-${tty}`, '--quiet'], local.env, { tty });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toMatch(SECRET);
      expect(result.stderr).toBe('');
    }
    // Without it, the warning stays.
    const loud = await svc(['keys', 'create', 'loud'], local.env);
    expect(loud.stderr).toContain('This is the only time this secret is shown');
  });

  it('keys rotate --quiet prints the new secret alone', async () => {
    const created = await svc(['keys', 'create', 'to-rotate', '--json'], local.env);
    const { id } = JSON.parse(created.stdout).key;
    const result = await svc(['keys', 'rotate', '--yes', id, '--quiet'], local.env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(SECRET);
    expect(result.stderr).toBe('');
  });

  it('svc api --quiet prints the answer alone', async () => {
    const result = await svc(['api', '/user/api-keys', '-f', 'name=quiet-api', '--quiet'], local.env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).secret).toMatch(SECRET);
    expect(result.stderr).toBe('');
  });
});

describe('one wording for a profile with no key', () => {
  it('an error, status and logout say the same sentence', async () => {
    const config = tempConfigDir();
    try {
      const env = { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: local.server.url, SVC_PROFILE: 'p3' };
      await svc(['login', '--with-key'], env, { input: local.server.apiKey! });
      await svc(['logout'], env);
      const sentence = "Not logged in: no API key for profile 'p3'";
      const list = await svc(['keys', 'list'], env);
      expect(list.exitCode).toBe(3);
      expect(list.stderr.split('\n')[0]).toBe(`error: ${sentence}.`);
      const status = await svc(['status'], env);
      expect(status.stdout).toMatch(new RegExp(`^Key: +✗ ${sentence}$`, 'm'));
      const logout = await svc(['logout'], env);
      expect(logout.stderr).toBe(`${sentence}; nothing to remove.`);
    } finally {
      config.remove();
    }
  });
});

describe("commander's own errors", () => {
  it('are one line each in a log, and fitted between words on a terminal', async () => {
    const logged = await svc(['keys', 'list', '--timeout', 'abc'], {});
    expect(logged.exitCode).toBe(2);
    expect(logged.stderr).toBe("error: option '--timeout <ms>' argument 'abc' is invalid. expected a whole number of at least 1.");
    const shown = await svc(['keys', 'list', '--timeout', 'abc'], {}, { tty: true, columns: 40 });
    expect(shown.stderr.split('\n').length).toBeGreaterThan(1);
    for (const line of shown.stderr.split('\n')) expect(line.length, line).toBeLessThanOrEqual(40);
  });
});
