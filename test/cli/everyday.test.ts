// tier: in-process
import { describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../helpers/in-process.js';

const local = useLocalServer();

describe('a mistyped command', () => {
  it.each([
    [['staus'], "unknown command 'staus'", "Did you mean 'svc status'?", "See 'svc --help'."],
    [['keys', 'lst'], "unknown command 'lst'", "Did you mean 'svc keys list'?", "See 'svc keys --help'."],
    [['key', 'list'], "unknown command 'key'", "Did you mean 'svc keys list'?", "See 'svc --help'."],
  ])('svc %j suggests the command it was near, exit 2', async (args, unknown, suggestion, help) => {
    const result = await svc(args, local.env);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`error: ${unknown}\n${suggestion}\n${help}`);
  });

  it('suggests nothing for a word near no command', async () => {
    const result = await svc(['frobnicate'], local.env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe("error: unknown command 'frobnicate'\nSee 'svc --help'.");
  });
});

describe('help of a subcommand', () => {
  it('lists the global options it inherits, as its own example uses --json', async () => {
    const result = await svc(['keys', 'list', '--help'], {});
    expect(result.exitCode).toBe(0);
    const inherited = result.stdout.slice(result.stdout.indexOf('Global Options:'));
    for (const flag of ['--json', '--quiet', '--no-input', '--base-url <url>', '--profile <name>', '--timeout <ms>', '--no-wait', '--max-wait <seconds>', '--verbose']) {
      expect(inherited).toContain(flag);
    }
    expect(result.stdout).toContain('$ svc keys list --json');
  });

  it('says no "(default: [])" for a repeatable field', async () => {
    const result = await svc(['api', '--help'], {});
    expect(result.stdout).not.toContain('(default: [])');
    expect(result.stdout).toContain('(repeatable)');
  });
});

describe('--json wherever there is a result', () => {
  it('svc --version --json is a JSON document', async () => {
    for (const args of [['--version', '--json'], ['--json', '-V']]) {
      const result = await svc(args, {});
      expect(result.exitCode).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    }
    expect((await svc(['--version'], {})).stdout).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('login and logout --json say what they did; a second logout removes nothing', async () => {
    const env = { ...local.env, SVC_API_KEY: undefined };
    const login = await svc(['login', '--with-key', '--json', '--profile', 'jsonic'], env, { input: local.server.apiKey! });
    expect(login.exitCode, login.stderr).toBe(0);
    const hint = `sk_${local.server.apiKey!.slice(3, 7)}…${local.server.apiKey!.slice(-4)}`;
    expect(JSON.parse(login.stdout)).toMatchObject({ profile: 'jsonic', baseUrl: local.server.url, key: { hint } });
    const logout = await svc(['logout', '--json', '--profile', 'jsonic'], env);
    expect(logout.exitCode).toBe(0);
    expect(JSON.parse(logout.stdout)).toEqual({ profile: 'jsonic', removed: { hint } });
    const again = await svc(['logout', '--json', '--profile', 'jsonic'], env);
    expect(JSON.parse(again.stdout)).toEqual({ profile: 'jsonic', removed: null });
  });

  it('login --with-key typed on a terminal: told first that the key shows, and never unattended (exit 2)', async () => {
    const env = { ...local.env, SVC_API_KEY: undefined };
    const typed = await svc(['login', '--with-key', '--profile', 'typed'], env, { input: `${local.server.apiKey!}\n`, tty: true });
    expect(typed.exitCode, typed.stderr).toBe(0);
    // Wrapped at the terminal's width.
    const said = typed.stderr.replace(/\n */g, ' ');
    expect(said).toContain('Reading the key from the terminal, where it shows as you type');
    expect(said).toContain('`svc login` alone asks for it without showing it.');
    for (const [flags, extra] of [[['--no-input'], {}], [[], { CI: '1' }]] as const) {
      const refused = await svc(['login', '--with-key', '--profile', 'never', ...flags], { ...env, ...extra }, { input: local.server.apiKey!, tty: true });
      expect(refused.exitCode).toBe(2);
      expect(refused.stderr.replace(/\n */g, ' ')).toContain('stdin is a terminal, and with');
      expect(refused.stderr.replace(/\n */g, ' ')).toContain('Pipe the key in (`printenv KEY | svc login --with-key`).');
    }
    const profiles = await svc(['profile', 'list', '--json'], env);
    expect(profiles.stdout).toContain('"typed"');
    expect(profiles.stdout).not.toContain('"never"');
  });
});

describe('svc api', () => {
  it('warns that a new key\'s secret in the answer is shown only this once', async () => {
    const created = await svc(['api', '/user/api-keys', '-f', 'name=by-api'], local.env);
    expect(created.exitCode, created.stderr).toBe(0);
    const doc = JSON.parse(created.stdout);
    expect(doc.secret).toMatch(/^sk_/);
    expect(created.stderr).toContain('This is the only time this secret is shown');
    expect(created.stderr).toContain(`svc keys revoke ${doc.id}`);
    const listed = await svc(['api', '/user/api-keys'], local.env);
    expect(listed.stderr).toBe('');
  });
});
