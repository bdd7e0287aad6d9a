// tier: in-process
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalServer, svc, tempConfigDir, type LocalServer } from '../helpers/in-process.js';
import { scriptedPrompter } from '../helpers/prompter.js';
import { shownText } from '../helpers/shown-text.js';

// docs/contract.md §C8: see what expires, clean up what is dead, rotate without a
// gap. Time moves on the reference server's clock, never by sleeping.

describe('the expiry warning for the key in use', () => {
  let server: LocalServer;
  const config = tempConfigDir();
  let expiring: string;
  beforeAll(async () => {
    server = await startLocalServer();
    const created = await svc(['keys', 'create', 'short-lived', '--expires-in', '3d'], { SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey!, SVC_CONFIG_DIR: config.dir });
    expiring = created.stdout;
  });
  afterAll(async () => {
    await server.stop();
    config.remove();
  });
  const env = (extra: Record<string, string> = {}) => ({ SVC_BASE_URL: server.url, SVC_API_KEY: expiring, SVC_CONFIG_DIR: config.dir, ...extra });
  const warnings = (stderr: string) => stderr.split('\n').filter((line) => line.includes('The key in use'));

  it('says once, on stderr, when the key expires within 7 days, and what to run', async () => {
    const result = await svc(['keys', 'list'], env());
    expect(warnings(result.stderr)).toEqual([expect.stringMatching(/The key in use \(sk_.{4}….{4}\) expires in 3 days \(.*\): replace it with `svc keys rotate key_\w+`/)]);
    const json = await svc(['keys', 'list', '--json'], env());
    expect(() => JSON.parse(json.stdout)).not.toThrow();
    expect(warnings(json.stderr)).toHaveLength(1);
  });

  it('the interactive manager shows it on its screen, at start and after every action, once on the terminal', async () => {
    const prompter = scriptedPrompter([{ menu: 'Ping' }, { menu: null }]);
    const result = await svc([], env(), { tty: true, columns: 200, rows: 30, deps: { prompter } });
    expect(result.exitCode, result.stderr).toBe(0);
    // Drawn with each of the two screens, before each menu; the first screen was cleared for the second.
    expect(warnings(result.stderr)).toHaveLength(2);
    expect(warnings(result.stderr)[0]).toMatch(/The key in use \(sk_.{4}….{4}\) expires in 3 days \(.*\): replace it with `svc keys rotate key_\w+`/);
    expect(result.stderr.indexOf('The key in use')).toBeLessThan(result.stderr.indexOf('Key sk_'));
    expect(warnings(shownText(result.stderr))).toHaveLength(1);
  });

  it('names the profile in the command to run when --profile chose it', async () => {
    const result = await svc(['keys', 'list', '--profile', 'soon'], env());
    expect(warnings(result.stderr)).toEqual([expect.stringMatching(/replace it with `svc keys rotate key_\w+ --profile soon`\.$/)]);
  });

  it('is silent under --quiet, with SVC_EXPIRY_WARNING_DAYS=0, and past its threshold', async () => {
    expect(warnings((await svc(['keys', 'list', '--quiet'], env())).stderr)).toEqual([]);
    expect(warnings((await svc(['keys', 'list'], env({ SVC_EXPIRY_WARNING_DAYS: '0' }))).stderr)).toEqual([]);
    expect(warnings((await svc(['keys', 'list'], env({ SVC_EXPIRY_WARNING_DAYS: '2' }))).stderr)).toEqual([]);
    expect(warnings((await svc(['keys', 'list'], env({ SVC_EXPIRY_WARNING_DAYS: '3' }))).stderr)).toHaveLength(1);
  });

  it('reaches svc status, for a key from SVC_API_KEY that no profile remembers', async () => {
    const fresh = tempConfigDir();
    try {
      const result = await svc(['status'], { SVC_BASE_URL: server.url, SVC_API_KEY: expiring, SVC_CONFIG_DIR: fresh.dir });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(warnings(result.stderr)).toEqual([expect.stringMatching(/The key in use \(sk_.{4}….{4}\) expires in 3 days/)]);
    } finally {
      fresh.remove();
    }
  });

  it('reaches the interactive manager after each action, as after a command', async () => {
    const prompter = scriptedPrompter([{ menu: 'Ping' }, { menu: 'Refresh' }]);
    const result = await svc([], env(), { tty: true, columns: 120, rows: 60, deps: { prompter } });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(warnings(shownText(result.stderr))).toHaveLength(1);
  });

  it('reaches commands that read no list, for a key saved in the profile', async () => {
    const login = await svc(['login', '--with-key'], { SVC_BASE_URL: server.url, SVC_CONFIG_DIR: config.dir }, { input: expiring });
    expect(login.exitCode, login.stderr).toBe(0);
    const created = await svc(['keys', 'create', 'another'], { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: server.url });
    expect(created.exitCode).toBe(0);
    expect(warnings(created.stderr)).toHaveLength(1);
  });
});
