// tier: in-process
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../../helpers/in-process.js';

const local = useLocalServer({ plan: 'pro' });

describe('login, status, logout', () => {
  const profileEnv = () => ({ SVC_CONFIG_DIR: local.configDir, SVC_BASE_URL: local.server.url });

  it('login --with-key checks the format (exit 2) and the server (exit 3) before saving', async () => {
    const malformed = await svc(['login', '--with-key'], profileEnv(), { input: 'not-a-key\n' });
    expect(malformed.exitCode).toBe(2);
    const unknown = await svc(['login', '--with-key'], profileEnv(), { input: `sk_${'u'.repeat(64)}\n` });
    expect(unknown.exitCode).toBe(3);
    expect(unknown.stderr).toContain('nothing was saved');
    const noKey = await svc(['login'], profileEnv());
    expect(noKey.exitCode).toBe(2);
    expect(noKey.stderr).toContain('--with-key');
  });

  it('saves a working key 0600 and status reports workspace, plan and limits', async () => {
    const login = await svc(['login', '--with-key', '--profile', 'work'], profileEnv(), { input: `${local.server.apiKey}\n` });
    expect(login.exitCode).toBe(0);
    const file = join(local.configDir, 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(local.configDir).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file, 'utf8')).profiles.work.apiKey).toBe(local.server.apiKey);

    const status = await svc(['status', '--profile', 'work', '--json'], profileEnv());
    expect(status.exitCode).toBe(0);
    const doc = JSON.parse(status.stdout);
    expect(doc).toMatchObject({
      profile: 'work',
      baseUrl: local.server.url,
      key: { source: 'profile' },
      workspace: { id: local.server.workspaceId, plan: 'pro', requestsPerMinute: 1000 },
      rateLimit: { limit: 1000 },
    });
    expect(doc.key.hint).toBe(`sk_${local.server.apiKey!.slice(3, 7)}…${local.server.apiKey!.slice(-4)}`);
    const human = await svc(['status'], { ...profileEnv(), SVC_PROFILE: 'work' });
    expect(human.stdout).toContain('pro, 1000 requests/minute');
    expect(human.stdout).not.toContain(local.server.apiKey!);
  });

  it('logout forgets the key; status then exits 3', async () => {
    const logout = await svc(['logout', '--profile', 'work'], profileEnv());
    expect(logout.exitCode).toBe(0);
    const status = await svc(['status', '--profile', 'work'], profileEnv());
    expect(status.exitCode).toBe(3);
    expect(status.stdout).toContain("Not logged in: no API key for profile 'work'");
  });
});
