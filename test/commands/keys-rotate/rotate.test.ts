// tier: in-process
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call, svc, useLocalServer } from '../../helpers/in-process.js';
import { scriptedPrompter, type Step } from '../../helpers/prompter.js';

const local = useLocalServer({ plan: 'pro' });

async function createKey(name: string, extra: string[] = []) {
  const result = await svc(['keys', 'create', name, '--json', ...extra], local.env);
  return JSON.parse(result.stdout).key as { id: string; secret: string; expiresAt: string | null; workspaceId: string };
}

describe('svc keys rotate', () => {
  it('creates a replacement with the same name and expiry, prints its secret, and revokes the old key', async () => {
    const old = await createKey('deploy', ['--expires-in', '10d']);
    const result = await svc(['keys', 'rotate', '--yes', old.id], local.env);
    expect(result.exitCode).toBe(0);
    const secret = result.stdout.trim();
    expect(secret).toMatch(/^sk_[A-Za-z0-9]{64}$/);
    expect(result.stderr).toContain('only time this secret is shown');
    expect((await svc(['keys', 'ping'], { ...local.env, SVC_API_KEY: secret })).exitCode).toBe(0);
    expect((await svc(['keys', 'ping'], { ...local.env, SVC_API_KEY: old.secret })).exitCode).toBe(3);
    const keys = JSON.parse((await svc(['keys', 'list', '--json'], local.env)).stdout).keys;
    const replacement = keys.find((k: { hint: string }) => k.hint === `sk_${secret.slice(3, 7)}…${secret.slice(-4)}`);
    expect(replacement).toMatchObject({ name: 'deploy', expiresAt: old.expiresAt });
    expect(keys.some((k: { id: string }) => k.id === old.id)).toBe(false);
  });

  it('--disable-old keeps the old key, disabled; --json gives both records', async () => {
    const old = await createKey('grace');
    const result = await svc(['keys', 'rotate', '--yes', old.id, '--disable-old', '--json'], local.env);
    expect(result.exitCode).toBe(0);
    const doc = JSON.parse(result.stdout);
    expect(doc.key).toMatchObject({ name: 'grace', secret: expect.stringMatching(/^sk_/) });
    expect(doc.previous).toMatchObject({ id: old.id, enabled: false, status: 'disabled' });
    expect((await svc(['keys', 'ping'], { ...local.env, SVC_API_KEY: old.secret })).exitCode).toBe(3);
  });

  it('saves the new key to the profile with --save when the rotated key is the one in use', async () => {
    const own = await createKey('own');
    const profileEnv = { SVC_CONFIG_DIR: local.configDir, SVC_BASE_URL: local.server.url };
    expect((await svc(['login', '--with-key'], profileEnv, { input: own.secret })).exitCode).toBe(0);
    const result = await svc(['keys', 'rotate', '--yes', own.id, '--save'], profileEnv);
    expect(result.exitCode).toBe(0);
    const saved = JSON.parse(readFileSync(join(local.configDir, 'config.json'), 'utf8')).profiles.default.apiKey;
    expect(saved).toBe(result.stdout.trim());
    expect((await svc(['keys', 'ping'], profileEnv)).exitCode).toBe(0);
  });

  it('without --save and without a TTY, prints the new secret, leaves the old key working and exits 1', async () => {
    const own = await createKey('own-2');
    const profileEnv = { SVC_CONFIG_DIR: local.configDir, SVC_BASE_URL: local.server.url, SVC_PROFILE: 'second' };
    await svc(['login', '--with-key'], profileEnv, { input: own.secret });
    const result = await svc(['keys', 'rotate', '--yes', own.id], profileEnv);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toMatch(/^sk_[A-Za-z0-9]{64}$/);
    expect(result.stderr).toContain("Profile 'second' still holds the old key");
    expect(result.stderr).toContain('svc login --profile second');
    expect((await svc(['keys', 'ping'], profileEnv)).exitCode).toBe(0);
  });

  describe('every profile that holds the old key', () => {
    const profile = (name: string) => JSON.parse(readFileSync(join(local.configDir, 'config.json'), 'utf8')).profiles[name];
    const loginAs = async (name: string, secret: string) =>
      expect((await svc(['login', '--with-key', '--profile', name], { SVC_CONFIG_DIR: local.configDir, SVC_BASE_URL: local.server.url }, { input: secret })).exitCode).toBe(0);

    it('gets the new key with --save, also when SVC_API_KEY holds the same key', async () => {
      const own = await createKey('env-and-profile');
      await loginAs('env-too', own.secret);
      const result = await svc(['keys', 'rotate', '--yes', own.id, '--save'], { ...local.env, SVC_API_KEY: own.secret, SVC_PROFILE: 'env-too' });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(profile('env-too').apiKey).toBe(result.stdout.trim());
      expect(result.stderr).toContain("Saved the new key to profile 'env-too'.");
    });

    it('of another profile than the one in use: kept, exit 1, without --save; saved there with it', async () => {
      const theirs = await createKey('other-profile');
      await loginAs('theirs', theirs.secret);
      const kept = await svc(['keys', 'rotate', '--yes', theirs.id], local.env);
      expect(kept.exitCode).toBe(1);
      expect(kept.stderr).toContain("Profile 'theirs' still holds the old key");
      expect((await svc(['keys', 'ping', '--profile', 'theirs'], { SVC_CONFIG_DIR: local.configDir, SVC_BASE_URL: local.server.url })).exitCode).toBe(0);
      const saved = await svc(['keys', 'rotate', '--yes', theirs.id, '--save'], local.env);
      expect(saved.exitCode, saved.stderr).toBe(0);
      expect(profile('theirs').apiKey).toBe(saved.stdout.trim());
      expect((await svc(['keys', 'ping', '--profile', 'theirs'], { SVC_CONFIG_DIR: local.configDir, SVC_BASE_URL: local.server.url })).exitCode).toBe(0);
    });

    it("remembers the new key's expiry, so the next command warns about the key the profile holds", async () => {
      const soon = await createKey('soon', ['--expires-in', '3d']);
      await loginAs('soon', soon.secret);
      const env = { SVC_CONFIG_DIR: local.configDir, SVC_BASE_URL: local.server.url, SVC_PROFILE: 'soon' };
      const rotated = await svc(['keys', 'rotate', '--yes', soon.id, '--save'], env);
      expect(rotated.exitCode, rotated.stderr).toBe(0);
      expect(profile('soon').keyExpiry.hint).toBe(`sk_${rotated.stdout.slice(3, 7)}…${rotated.stdout.slice(-4)}`);
      const ping = await svc(['keys', 'ping'], env);
      expect(ping.stderr).toMatch(/The key in use \(sk_.{4}….{4}\) expires in 3 days/);
    });
  });

  describe('on a terminal, asked first as revoke asks', () => {
    const rotateOnTerminal = async (name: string, script: Step[], extra: string[] = []) => {
      const old = await createKey(name);
      const prompter = scriptedPrompter(script);
      const result = await svc(['keys', 'rotate', old.id, ...extra], local.env, { tty: true, deps: { prompter } });
      const named = JSON.parse((await svc(['keys', 'list', '--json', '--name', name], local.env)).stdout).keys;
      return { old, result, named, asked: prompter.asked };
    };

    it('names the key and what becomes of the old one, and goes ahead on yes', async () => {
      const { old, result, named, asked } = await rotateOnTerminal('ask-yes', [{ confirm: true }]);
      expect(result.exitCode, result.stderr).toBe(0);
      expect(asked[0]).toBe(`Rotate 'ask-yes' (${old.id})? A new key replaces it and the old one is revoked; this cannot be undone.`);
      expect(named).toHaveLength(1);
      expect(named[0].id).not.toBe(old.id);
    });

    it('on no, or Esc, makes nothing and revokes nothing: the same outcome, exit 130', async () => {
      const no = await rotateOnTerminal('ask-no', [{ confirm: false }]);
      expect(no.result.exitCode).toBe(130);
      expect(no.result.stderr.split('\n').at(-1)).toBe('Cancelled; nothing was changed.');
      expect(no.named.map((k: { id: string }) => k.id)).toEqual([no.old.id]);
      const esc = await rotateOnTerminal('ask-esc', [{ cancel: true }]);
      expect(esc.result.exitCode).toBe(130);
      expect(esc.result.stderr.split('\n').at(-1)).toBe('Cancelled; nothing was changed.');
      expect(esc.named.map((k: { id: string }) => k.id)).toEqual([esc.old.id]);
    });

    it('--yes does not ask', async () => {
      const { result, asked } = await rotateOnTerminal('ask-skipped', [], ['--yes']);
      expect(result.exitCode, result.stderr).toBe(0);
      expect(asked).toEqual([]);
    });
  });

  describe('on a terminal, the question whether to save the new key', () => {
    const onTerminal = async (name: string, answer: Step) => {
      const own = await createKey(name);
      const profileEnv = { SVC_CONFIG_DIR: local.configDir, SVC_BASE_URL: local.server.url, SVC_PROFILE: name };
      await svc(['login', '--with-key'], profileEnv, { input: own.secret });
      const prompter = scriptedPrompter([{ confirm: true }, answer]);
      const result = await svc(['keys', 'rotate', own.id], profileEnv, { tty: true, deps: { prompter } });
      const profile = () => JSON.parse(readFileSync(join(local.configDir, 'config.json'), 'utf8')).profiles[name];
      return { own, result, profileEnv, profile, asked: prompter.asked };
    };

    it('yes saves it there and revokes the old key', async () => {
      const { own, result, profileEnv, profile } = await onTerminal('said-yes', { confirm: true });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(profile().apiKey).not.toBe(own.secret);
      expect((await svc(['keys', 'ping'], profileEnv)).exitCode).toBe(0);
      expect((await svc(['keys', 'ping'], { ...local.env, SVC_API_KEY: own.secret })).exitCode).toBe(3);
    });

    it('no leaves the profile and the old key as they were, and exits 1', async () => {
      const { own, result, profileEnv, profile } = await onTerminal('said-no', { confirm: false });
      expect(result.exitCode).toBe(1);
      expect(profile().apiKey).toBe(own.secret);
      expect((await svc(['keys', 'ping'], profileEnv)).exitCode).toBe(0);
      expect(result.stderr).toContain('svc login --profile said-no');
    });

    it('Esc or Ctrl-C is no answer: nothing more is changed, the new key is named, exit 130', async () => {
      const { own, result, profileEnv, profile } = await onTerminal('said-nothing', { cancel: true });
      expect(result.exitCode).toBe(130);
      expect(profile().apiKey).toBe(own.secret);
      expect((await svc(['keys', 'ping'], profileEnv)).exitCode).toBe(0);
      expect(result.stderr.replace(/\n  /g, ' ')).toMatch(/Stopped: the new key \S+ was created and shown above; the old key \S+ still works/);
      expect(result.stderr).not.toContain('✓ Saved');
      expect(result.stderr).not.toContain('Revoked');
    });
  });

  it.each([
    ['revoked', [], 'DELETE'],
    ['disabled', ['--disable-old'], 'PATCH'],
  ])('--save of the key in use, the answer about the old key lost after it was %s: reported done, exit 0', async (retired, flags, method) => {
    const name = `lost-${retired}`;
    const own = await createKey(name);
    const profileEnv = { SVC_CONFIG_DIR: local.configDir, SVC_BASE_URL: local.server.url, SVC_PROFILE: name };
    expect((await svc(['login', '--with-key'], profileEnv, { input: own.secret })).exitCode).toBe(0);
    await call(local.server.url, 'POST', '/_local/faults', local.server.adminToken, { rules: [{ method, path: `/user/api-keys/${own.id}`, status: 503, after: true }] });
    const result = await svc(['keys', 'rotate', '--yes', own.id, '--save', ...flags], profileEnv);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('could not be');
    const keys = JSON.parse((await svc(['keys', 'list', '--json', '--name', name], local.env)).stdout).keys;
    expect(keys.filter((k: { id: string }) => k.id === own.id).map((k: { status: string }) => k.status)).toEqual(retired === 'revoked' ? [] : ['disabled']);
    expect((await svc(['keys', 'ping'], profileEnv)).exitCode).toBe(0);
  });

  describe('--finish and --cancel never revoke the key the profile uses', () => {
    const inProfile = async (name: string) => {
      const own = await createKey(name);
      const profileEnv = { SVC_CONFIG_DIR: local.configDir, SVC_BASE_URL: local.server.url, SVC_PROFILE: name };
      expect((await svc(['login', '--with-key'], profileEnv, { input: own.secret })).exitCode).toBe(0);
      const profile = () => JSON.parse(readFileSync(join(local.configDir, 'config.json'), 'utf8')).profiles[name];
      const status = async (id: string) => JSON.parse((await svc(['keys', 'view', id, '--json'], local.env)).stdout).status;
      return { own, profileEnv, profile, status };
    };

    it('--cancel after --overlap --save: the profile holds the new key, so it is refused and nothing changes', async () => {
      const { own, profileEnv, profile, status } = await inProfile('saved-then-cancelled');
      expect((await svc(['keys', 'rotate', own.id, '--overlap', '--save'], profileEnv)).exitCode).toBe(0);
      const { newId } = profile().pendingRotation;
      const result = await svc(['keys', 'rotate', '--cancel'], profileEnv);
      expect(result.exitCode).toBe(1);
      expect(result.stderr).toContain(`Profile 'saved-then-cancelled' uses the new key ${newId}`);
      expect(result.stderr).toContain('svc login --profile saved-then-cancelled');
      expect(await status(newId)).toBe('enabled');
      expect(profile().pendingRotation).toMatchObject({ oldId: own.id, newId });
      expect((await svc(['keys', 'ping'], profileEnv)).exitCode).toBe(0);
      expect((await svc(['keys', 'rotate', '--finish'], profileEnv)).exitCode).toBe(0);
      expect((await svc(['keys', 'ping'], profileEnv)).exitCode).toBe(0);
    });

    it('--finish once the profile is logged in with the old key again: refused until the new one is saved', async () => {
      const { own, profileEnv, profile, status } = await inProfile('finished-too-soon');
      const rotated = await svc(['keys', 'rotate', own.id, '--overlap', '--save'], profileEnv);
      expect(rotated.exitCode).toBe(0);
      expect((await svc(['login', '--with-key'], profileEnv, { input: own.secret })).exitCode).toBe(0);
      const result = await svc(['keys', 'rotate', '--finish'], profileEnv);
      expect(result.exitCode).toBe(1);
      expect(result.stderr).toContain(`Profile 'finished-too-soon' uses the old key ${own.id}`);
      expect(await status(own.id)).toBe('enabled');
      expect((await svc(['keys', 'ping'], profileEnv)).exitCode).toBe(0);
      expect((await svc(['login', '--with-key'], profileEnv, { input: rotated.stdout })).exitCode).toBe(0);
      expect((await svc(['keys', 'rotate', '--finish'], profileEnv)).exitCode).toBe(0);
      expect(profile().pendingRotation).toBeUndefined();
      expect((await svc(['keys', 'ping'], profileEnv)).exitCode).toBe(0);
    });
  });

  it('warns when the replacement anchors to another workspace', async () => {
    const old = await createKey('anchored');
    const workspace = await call(local.server.url, 'POST', '/_local/workspaces', local.server.adminToken, {
      userId: local.server.userId,
      name: 'Team',
      plan: 'starter',
    });
    expect(workspace.status).toBe(201);
    await call(local.server.url, 'PUT', `/_local/users/${local.server.userId}/active-workspace`, local.server.adminToken, {
      workspaceId: workspace.json.id,
    });
    const result = await svc(['keys', 'rotate', '--yes', old.id, '--json'], local.env);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout).key.workspaceId).toBe(workspace.json.id);
    expect(result.stderr).toContain(`anchors to workspace ${workspace.json.id}`);
  });

  it('exits 4 for an unknown key and creates nothing', async () => {
    const before = JSON.parse((await svc(['keys', 'list', '--json'], local.env)).stdout).keys.length;
    expect((await svc(['keys', 'rotate', '--yes', 'key_nothere'], local.env)).exitCode).toBe(4);
    expect(JSON.parse((await svc(['keys', 'list', '--json'], local.env)).stdout).keys.length).toBe(before);
  });
});
