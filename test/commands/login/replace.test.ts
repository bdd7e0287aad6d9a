// tier: in-process
/**
 * `svc login` never replaces a profile's key or server unasked: on a
 * terminal it asks first (gh auth login's "already logged in; re-authenticate?"),
 * and No or Ctrl-C leave the profile as it was; where nobody can be asked it
 * goes on and says what it replaced, on stderr and in --json.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyHint } from '../../../src/contract/key-format.js';
import { svc } from '../../helpers/in-process.js';
import { useCommandTest } from '../../helpers/command-test.js';

const local = useCommandTest();

/** The profile's own key and server, not SVC_API_KEY's. */
const as = (profile: string, more: Record<string, string | undefined> = {}) => ({ SVC_CONFIG_DIR: local.configDir, SVC_BASE_URL: local.server.url, SVC_PROFILE: profile, ...more });

const savedProfile = (name: string) => JSON.parse(readFileSync(join(local.configDir, 'config.json'), 'utf8')).profiles[name];

describe('svc login over a profile that holds a key', () => {
  it('asks on a terminal, naming the key and server; No, Esc and Ctrl-C change nothing (exit 130); yes replaces', async () => {
    const first = await local.create('first');
    const second = await local.create('second');
    const env = as('ask');
    await svc(['login', '--with-key'], env, { input: `${first.secret}\n` });
    expect(savedProfile('ask').apiKey).toBe(first.secret);

    for (const answer of [{ confirm: false }, { cancel: 'ctrl-c' as const }, { cancel: true as const }]) {
      const declined = await local.onTerminal(['login'], [answer], { env });
      expect(declined.exitCode, declined.stderr).toBe(130);
      expect(declined.asked).toEqual([`Profile 'ask' already holds key ${keyHint(first.secret)} for ${local.server.url}; replace it?`]);
      expect(declined.stderr).toContain('Cancelled; the profile was not changed.');
      expect(savedProfile('ask').apiKey).toBe(first.secret);
    }

    const agreed = await local.onTerminal(['login'], [{ confirm: true }, { secret: second.secret }], { env });
    expect(agreed.exitCode, agreed.stderr).toBe(0);
    expect(savedProfile('ask').apiKey).toBe(second.secret);

    // --yes is the answer given beforehand, as for every question svc asks.
    const unasked = await local.onTerminal(['login', '--yes'], [{ secret: first.secret }], { env });
    expect(unasked.exitCode, unasked.stderr).toBe(0);
    expect(unasked.asked).toEqual(['API key:']);
    expect(savedProfile('ask').apiKey).toBe(first.secret);
  });

  it('asks nothing for a new profile, and --json says nothing was replaced', async () => {
    const key = await local.create('fresh');
    const result = await local.onTerminal(['login', '--json'], [{ secret: key.secret }], { env: as('fresh') });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.asked).toEqual(['API key:']);
    expect(JSON.parse(result.stdout).replaced).toBeNull();
    expect(result.stderr).not.toContain('held key');
  });

  it('names the other server when the login points the profile elsewhere', async () => {
    const key = await local.create('moved');
    await svc(['login', '--with-key'], as('moved'), { input: `${key.secret}\n` });
    const declined = await local.onTerminal(['login', '--base-url', 'http://127.0.0.1:9'], [{ confirm: false }], { env: as('moved') });
    expect(declined.exitCode).toBe(130);
    expect(declined.asked).toEqual([`Profile 'moved' already holds key ${keyHint(key.secret)} for ${local.server.url}; replace it with a key for http://127.0.0.1:9?`]);
    expect(savedProfile('moved').baseUrl).toBe(local.server.url);
  });
});

describe('svc login where nobody can be asked', () => {
  it('goes on, and says on stderr and in --json which key and server it replaced', async () => {
    const old = await local.create('old');
    const replacement = await local.create('new');
    await svc(['login', '--with-key'], as('ci'), { input: `${old.secret}\n` });
    // Piped, and in CI.
    for (const how of [{ env: as('ci'), tty: false }, { env: as('ci', { CI: 'true' }), tty: false }]) {
      const before = savedProfile('ci').apiKey as string;
      const secret = before === old.secret ? replacement.secret : old.secret;
      const result = await svc(['login', '--with-key', '--json', '--quiet'], how.env, { input: `${secret}\n`, tty: how.tty });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stderr).toContain(`Profile 'ci' held key ${keyHint(before)} for ${local.server.url}; it now holds ${keyHint(secret)} for ${local.server.url}.`);
      expect(JSON.parse(result.stdout).replaced).toEqual({ hint: keyHint(before), baseUrl: local.server.url });
      expect(savedProfile('ci').apiKey).toBe(secret);
    }
    // The same key again replaces nothing.
    const again = await svc(['login', '--with-key', '--json'], as('ci'), { input: `${savedProfile('ci').apiKey}\n` });
    expect(JSON.parse(again.stdout).replaced).toBeNull();
    expect(again.stderr).not.toContain('held key');
  });
});

describe('svc login --profile with a typo of a profile that exists', () => {
  it('says, before the key is read, that it creates a new profile, and which one was probably meant', async () => {
    const key = await local.create('typo');
    await svc(['login', '--with-key'], as('prod'), { input: `${key.secret}\n` });
    const result = await svc(['login', '--with-key', '--profile', 'prdo'], as('prod'), { input: `${key.secret}\n` });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/Profile 'prdo' does not exist; this login creates it\. The profiles are: .*prod.*\. Did you mean `--profile prod`\?/);
    const fresh = await svc(['login', '--with-key', '--profile', 'unlike-any'], as('prod'), { input: `${key.secret}\n` });
    expect(fresh.stderr).not.toContain('does not exist');
  });
});
