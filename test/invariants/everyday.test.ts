// tier: in-process
import { describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../helpers/in-process.js';

const local = useLocalServer();

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
