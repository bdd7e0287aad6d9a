// tier: in-process
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call, svc, useLocalServer } from '../helpers/in-process.js';

const local = useLocalServer({ plan: 'pro' });

async function createKey(name: string, extra: string[] = []) {
  const result = await svc(['keys', 'create', name, '--json', ...extra], local.env);
  return JSON.parse(result.stdout) as { id: string; secret: string; expiresAt: string | null; workspaceId: string };
}

describe('svc keys rotate', () => {
  it('creates a replacement with the same name and expiry, prints its secret, and revokes the old key', async () => {
    const old = await createKey('deploy', ['--expires-in', '10d']);
    const result = await svc(['keys', 'rotate', old.id], local.env);
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
    const result = await svc(['keys', 'rotate', old.id, '--disable-old', '--json'], local.env);
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
    const result = await svc(['keys', 'rotate', own.id, '--save'], profileEnv);
    expect(result.exitCode).toBe(0);
    const saved = JSON.parse(readFileSync(join(local.configDir, 'config.json'), 'utf8')).profiles.default.apiKey;
    expect(saved).toBe(result.stdout.trim());
    expect((await svc(['keys', 'ping'], profileEnv)).exitCode).toBe(0);
  });

  it('without --save and without a TTY, warns that the profile holds a dead key', async () => {
    const own = await createKey('own-2');
    const profileEnv = { SVC_CONFIG_DIR: local.configDir, SVC_BASE_URL: local.server.url, SVC_PROFILE: 'second' };
    await svc(['login', '--with-key'], profileEnv, { input: own.secret });
    const result = await svc(['keys', 'rotate', own.id], profileEnv);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain("Profile 'second' still holds the old key");
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
    const result = await svc(['keys', 'rotate', old.id, '--json'], local.env);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout).key.workspaceId).toBe(workspace.json.id);
    expect(result.stderr).toContain(`anchors to workspace ${workspace.json.id}`);
  });

  it('exits 4 for an unknown key and creates nothing', async () => {
    const before = JSON.parse((await svc(['keys', 'list', '--json'], local.env)).stdout).keys.length;
    expect((await svc(['keys', 'rotate', 'key_nothere'], local.env)).exitCode).toBe(4);
    expect(JSON.parse((await svc(['keys', 'list', '--json'], local.env)).stdout).keys.length).toBe(before);
  });
});
