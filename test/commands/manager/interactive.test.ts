// tier: in-process
/**
 * The interactive manager's actions in-process: a TTY IO and a scripted
 * prompter stand in for the person. What only a real terminal shows (keys,
 * screen, resize) is in test/e2e/interactive.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { svc, tempConfigDir } from '../../helpers/in-process.js';
import { useCommandTest } from '../../helpers/command-test.js';
import { scriptedPrompter, type Step } from '../../helpers/prompter.js';
import { shownText } from '../../helpers/shown-text.js';

const local = useCommandTest({ plan: 'pro' });

/** The manager (or `args`) on a terminal tall enough for its whole screen. */
const session = (script: Step[], env: Record<string, string | undefined> = local.env, args: string[] = []) => local.onTerminal(args, script, { rows: 60, env });

const keyNamed = async (name: string) =>
  JSON.parse((await svc(['keys', 'list', '--json', '--name', name], local.env)).stdout).keys[0] as { id: string; enabled: boolean };

describe('the interactive manager, action by action', () => {
  it('creates a key, keeps its secret on screen until Enter, and lists it', async () => {
    const result = await session([{ menu: 'Create a key' }, { text: 'from-the-menu' }, { text: '2w' }, { pause: true }]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/Created key 'from-the-menu' \(\S+\), expires in 2 weeks/);
    const secret = result.stderr.match(/\n {2}(sk_[A-Za-z0-9]{64})\n/)![1]!;
    expect(result.asked).toContain('Stored it? Press Enter to clear the secret from the screen.');
    // After Enter, the table is drawn again with the new key in it.
    expect(result.stderr.slice(result.stderr.indexOf(secret) + secret.length)).toMatch(/key_\S+ +from-the-menu/);
    // What the terminal shows then: the secret cleared, what was said about the key once, above one screen.
    const shown = shownText(result.stderr);
    expect(shown).not.toContain(secret);
    expect(shown.match(/Created key 'from-the-menu'/g)).toHaveLength(1);
    expect(shown.match(/svc {2}profile default/g)).toHaveLength(1);
    expect(shown.indexOf('Created key')).toBeLessThan(shown.indexOf('svc  profile default'));
  });

  it('disables and enables a key that is not in use', async () => {
    await svc(['keys', 'create', 'switch-me'], local.env);
    const { id } = await keyNamed('switch-me');
    let result = await session([{ menu: 'Enable or disable' }, { search: 'switch-me' }, { confirm: true }]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain(`Disabled ${id} (switch-me).`);
    expect((await keyNamed('switch-me')).enabled).toBe(false);
    result = await session([{ menu: 'Enable or disable' }, { search: 'switch-me' }]);
    expect(result.stderr).toContain(`Enabled ${id} (switch-me).`);
    expect((await keyNamed('switch-me')).enabled).toBe(true);
  });

  it('revokes a key after asking, and keeps it on "no"', async () => {
    await svc(['keys', 'create', 'revoke-me'], local.env);
    const { id } = await keyNamed('revoke-me');
    const kept = await session([{ menu: 'Revoke a key' }, { pickMany: ['revoke-me'] }, { confirm: false }]);
    expect(kept.asked.join('\n')).toContain(`Revoke 'revoke-me' (${id})? This cannot be undone.`);
    expect(await keyNamed('revoke-me')).toBeDefined();
    const gone = await session([{ menu: 'Revoke a key' }, { pickMany: ['revoke-me'] }, { confirm: true }]);
    expect(gone.exitCode, gone.stderr).toBe(0);
    expect(gone.stderr).toContain(`Revoked 'revoke-me' (${id}).`);
    expect(await keyNamed('revoke-me')).toBeUndefined();
  });

  it('rotates a key after asking, and shows the new secret', async () => {
    await svc(['keys', 'create', 'rotate-me'], local.env);
    const { id } = await keyNamed('rotate-me');
    const result = await session([{ menu: 'Rotate a key' }, { search: 'rotate-me' }, { confirm: true }, { pause: true }]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain(`Revoked the old key ${id}`);
    expect((await keyNamed('rotate-me')).id).not.toBe(id);
  });

  it('pings the key in use', async () => {
    const result = await session([{ menu: 'Ping' }]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/Key sk_\S+ works: 200 from http:\/\/127\.0\.0\.1:\d+ in \d+ ms/);
  });

  it('switches to another profile, logs in there, and says SVC_API_KEY overrides profiles', async () => {
    const config = tempConfigDir();
    try {
      const env = { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: local.server.url };
      const result = await session(
        [{ menu: 'Switch profile' }, { select: 'Another profile' }, { text: 'second' }, { menu: 'Log in' }, { secret: local.server.apiKey! }],
        env,
      );
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stderr).toContain('svc  profile second');
      expect(result.stderr).toContain("saved to profile 'second'");
      const saved = JSON.parse(readFileSync(join(config.dir, 'config.json'), 'utf8'));
      expect(saved.profiles.second.apiKey).toBe(local.server.apiKey);

      const overridden = await session([{ menu: 'Switch profile' }, { select: 'default' }], { ...env, SVC_API_KEY: local.server.apiKey! });
      expect(overridden.stderr).toContain("SVC_API_KEY is set: it overrides every profile's saved key.");
    } finally {
      config.remove();
    }
  });

  it('logging in to a profile with no server asks for its address, saves it with the key, and asks nothing where one is given', async () => {
    const config = tempConfigDir();
    try {
      const env = { SVC_CONFIG_DIR: config.dir };
      const result = await session(
        [{ menu: 'Switch profile' }, { select: 'Another profile' }, { text: 'elsewhere' }, { menu: 'Log in' }, { text: local.server.url }, { secret: local.server.apiKey! }],
        env,
      );
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.asked).toContain('Server address (Enter for http://127.0.0.1:8787):');
      expect(result.stderr).toContain(`Logged in to ${local.server.url}`);
      const saved = JSON.parse(readFileSync(join(config.dir, 'config.json'), 'utf8'));
      expect(saved.profiles.elsewhere).toMatchObject({ apiKey: local.server.apiKey, baseUrl: local.server.url });

      // Its server now saved, "Log in with another key" goes there without asking.
      // It asks first, as `svc login` does, naming the key it would replace.
      const again = await session([{ menu: 'Log in with another key' }, { confirm: true }, { secret: local.server.apiKey! }], env, ['--profile', 'elsewhere']);
      expect(again.exitCode, again.stderr).toBe(0);
      expect(again.asked.filter((q) => q.startsWith('Server address'))).toEqual([]);
      expect(again.asked).toContain(`Profile 'elsewhere' already holds key ${local.server.apiKey!.slice(0, 7)}…${local.server.apiKey!.slice(-4)} for ${local.server.url}; replace it?`);
    } finally {
      config.remove();
    }
  });

  it('an action refused with 401 for the session\'s key says so in one line; the screen after it tells the rest, once', async () => {
    // The key is disabled once the first screen is drawn, as from another terminal.
    const made = JSON.parse((await svc(['keys', 'create', 'pulled-away', '--json'], local.env)).stdout).key as { id: string; secret: string };
    const prompter = scriptedPrompter([{ menu: 'Ping' }]);
    const asking = prompter.menu.bind(prompter);
    let first = true;
    prompter.menu = async (...args) => {
      if (first) expect((await svc(['keys', 'disable', made.id], local.env)).exitCode).toBe(0);
      first = false;
      return asking(...args);
    };
    const result = await svc([], { ...local.env, SVC_API_KEY: made.secret }, { tty: true, columns: 120, rows: 60, deps: { prompter } });
    expect(result.exitCode, result.stderr).toBe(0);
    const shown = shownText(result.stderr);
    expect(shown).toContain('error: The server rejected the key (401); the screen below says more.');
    expect(shown.split('Authentication failed (401)').length - 1).toBe(1);
  });

  it('a rejected key is shown in place of the table, naming the key and the profile it came from', async () => {
    const config = tempConfigDir();
    try {
      const env = { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: local.server.url };
      const created = JSON.parse((await svc(['keys', 'create', 'second-profile-key', '--json'], local.env)).stdout).key;
      expect((await svc(['login', '--with-key', '--profile', 'second'], env, { input: created.secret })).exitCode).toBe(0);
      expect((await svc(['keys', 'disable', created.id], local.env)).exitCode).toBe(0);
      const result = await session([], env, ['--profile', 'second']);
      expect(result.exitCode).toBe(0);
      expect(result.stderr).toContain(`key:    sk_${created.secret.slice(3, 7)}…${created.secret.slice(-4)} from profile 'second' in the config store`);
      expect(result.stderr).toContain('Next: run `svc login --profile second` with a working key');
    } finally {
      config.remove();
    }
  });
});
