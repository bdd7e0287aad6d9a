// tier: in-process
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startLocalServer, svc, useLocalServer, windowEndsIn, type LocalServer } from '../helpers/in-process.js';

const local = useLocalServer({ plan: 'pro' });

const NO_STACK = /\n\s+at .+:\d+:\d+/;

describe('keys create', () => {
  it('prints only the secret when piped, and the one-time warning on stderr', async () => {
    const result = await svc(['keys', 'create', 'ci'], local.env);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^sk_[A-Za-z0-9]{64}$/);
    expect(result.stderr).toContain('only time this secret is shown');
    expect(result.stderr).toContain('revoke');
    const ping = await svc(['keys', 'ping'], { ...local.env, SVC_API_KEY: result.stdout });
    expect(ping.exitCode).toBe(0);
  });

  it('prints the API document with --json, secret included', async () => {
    const result = await svc(['keys', 'create', 'json-key', '--expires-in', '30d', '--json'], local.env);
    expect(result.exitCode).toBe(0);
    const created = JSON.parse(result.stdout);
    expect(created).toMatchObject({ name: 'json-key', enabled: true, status: 'enabled', workspaceId: local.server.workspaceId });
    expect(created.secret).toMatch(/^sk_/);
    const days = (Date.parse(created.expiresAt) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThan(30.1);
    expect(result.stderr).toContain('only time this secret is shown');
  });

  it('needs a name without a TTY: usage error naming the argument', async () => {
    const result = await svc(['keys', 'create'], local.env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('svc keys create <name>');
  });

  it('passes a 400 from the server on as a usage error', async () => {
    const past = await svc(['keys', 'create', 'old', '--expires-at', '2001-01-01T00:00:00Z'], local.env);
    expect(past.exitCode).toBe(2);
    expect(past.stderr).toContain('400');
    const both = await svc(['keys', 'create', 'x', '--expires-in', '1d', '--expires-at', '2099-01-01T00:00:00Z'], local.env);
    expect(both.exitCode).toBe(2);
    const badDuration = await svc(['keys', 'create', 'x', '--expires-in', 'soon'], local.env);
    expect(badDuration.exitCode).toBe(2);
    expect(badDuration.stderr).toContain('Invalid duration');
  });
});

describe('keys list', () => {
  it('prints tab-separated rows under a header when piped, with ISO times', async () => {
    const result = await svc(['keys', 'list'], local.env);
    expect(result.exitCode).toBe(0);
    const [head, ...rows] = result.stdout.split('\n');
    expect(head).toBe('ID\tNAME\tKEY\tSTATUS\tWORKSPACE\tCREATED\tEXPIRES\tLAST USED');
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const row of rows) {
      const cells = row.split('\t');
      expect(cells).toHaveLength(8);
      expect(cells[5]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
  });

  it('prints the API document with --json', async () => {
    const result = await svc(['keys', 'list', '--json'], local.env);
    const doc = JSON.parse(result.stdout);
    expect(Object.keys(doc)).toEqual(['keys']);
    expect(doc.keys[0]).toHaveProperty('hint');
    expect(result.stdout).not.toMatch(/sk_[A-Za-z0-9]{64}/);
  });
});

describe('keys enable / disable / revoke', () => {
  let id: string;
  let secret: string;
  beforeAll(async () => {
    const created = JSON.parse((await svc(['keys', 'create', 'toggle', '--json'], local.env)).stdout);
    id = created.id;
    secret = created.secret;
  });

  it('disables, says so again on a repeat (a 204 is done as asked), and the key stops working', async () => {
    const first = await svc(['keys', 'disable', id], local.env);
    expect(first.exitCode).toBe(0);
    expect(first.stderr).toContain(`Disabled ${id}`);
    const again = await svc(['keys', 'disable', id], local.env);
    expect(again.exitCode).toBe(0);
    expect(again.stderr).toContain(`${id} (toggle) is disabled.`);
    const json = await svc(['keys', 'disable', id, '--json'], local.env);
    expect(JSON.parse(json.stdout)).toMatchObject({ id, enabled: false, status: 'disabled' });
    const dead = await svc(['keys', 'ping'], { ...local.env, SVC_API_KEY: secret });
    expect(dead.exitCode).toBe(3);
  });

  it('enables again', async () => {
    const result = await svc(['keys', 'enable', id, '--json'], local.env);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ id, enabled: true });
    expect((await svc(['keys', 'enable', id], local.env)).stderr).toContain(`${id} (toggle) is enabled.`);
  });

  it('answers 4 for an unknown id of any shape (ids are opaque), and 2 for one no URL can carry', async () => {
    expect((await svc(['keys', 'enable', 'key_doesnotexist'], local.env)).exitCode).toBe(4);
    const foreign = await svc(['keys', 'disable', 'NOT AN ID/..'], local.env);
    expect(foreign.exitCode).toBe(4);
    expect(foreign.stderr).toContain('No key with id or name NOT AN ID/..');
    expect((await svc(['keys', 'disable', '..'], local.env)).exitCode).toBe(2);
  });

  it('refuses to revoke without --yes when nobody can be asked', async () => {
    const result = await svc(['keys', 'revoke', id], local.env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--yes');
  });

  it('revokes with --yes; a second revoke is 4, or 0 with --if-exists', async () => {
    const result = await svc(['keys', 'revoke', id, '--yes', '--json'], local.env);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ id, revoked: true });
    expect((await svc(['keys', 'ping'], { ...local.env, SVC_API_KEY: secret })).exitCode).toBe(3);
    const again = await svc(['keys', 'revoke', id, '--yes'], local.env);
    expect(again.exitCode).toBe(4);
    expect(again.stderr).toContain(id);
    const tolerant = await svc(['keys', 'revoke', id, '--yes', '--if-exists', '--json'], local.env);
    expect(tolerant.exitCode).toBe(0);
    expect(JSON.parse(tolerant.stdout)).toEqual({ id, revoked: false });
  });

  it('revokes several, carries on past a missing one and exits 4', async () => {
    const a = JSON.parse((await svc(['keys', 'create', 'a', '--json'], local.env)).stdout).id;
    const b = JSON.parse((await svc(['keys', 'create', 'b', '--json'], local.env)).stdout).id;
    const result = await svc(['keys', 'revoke', a, 'key_missing', b, '--yes', '--json'], local.env);
    expect(result.exitCode).toBe(4);
    expect(JSON.parse(result.stdout)).toEqual([
      { id: a, revoked: true },
      { id: b, revoked: true },
    ]);
  });
});

describe('authentication failures', () => {
  it('a rejected key stops with an operator message and exit 3, never retried', async () => {
    const wrong = `sk_${'Z'.repeat(60)}QRST`;
    const result = await svc(['keys', 'list'], { ...local.env, SVC_API_KEY: wrong });
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain('unknown, disabled, expired or revoked');
    expect(result.stderr).toContain('sk_ZZZZ…QRST');
    expect(result.stderr).toContain('SVC_API_KEY');
    expect(result.stderr).not.toContain(wrong);
    expect(result.stderr).not.toMatch(NO_STACK);
  });

  it('no key at all is exit 3 with the way out', async () => {
    const result = await svc(['keys', 'list'], { SVC_CONFIG_DIR: local.configDir, SVC_BASE_URL: local.server.url });
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain('svc login');
  });
});

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

describe('--verbose', () => {
  it('logs each request on stderr with the key redacted', async () => {
    const result = await svc(['keys', 'list', '--verbose'], local.env);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toMatch(/> GET http:\/\/127\.0\.0\.1:\d+\/api\/service\/user\/api-keys/);
    expect(result.stderr).toMatch(/< 200 in \d+ ms/);
    expect(result.stderr).not.toContain(local.server.apiKey!);
  });
});

describe('usage errors', () => {
  it('unknown commands and bad option values exit 2', async () => {
    expect((await svc(['keys', 'frobnicate'], local.env)).exitCode).toBe(2);
    expect((await svc(['keys', 'list', '--timeout', '10ms'], local.env)).exitCode).toBe(2);
    expect((await svc(['--max-wait', '-1', 'keys', 'list'], local.env)).exitCode).toBe(2);
  });

  it('--version and --help exit 0', async () => {
    const version = await svc(['--version'], {});
    expect(version.exitCode).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+/);
    expect((await svc(['keys', 'create', '--help'], {})).stdout).toContain('--expires-in');
  });
});

describe('rate limits (docs/contract.md §C4)', () => {
  let limited: LocalServer;
  let limitedEnv: Record<string, string>;
  beforeAll(async () => {
    limited = await startLocalServer();
    limitedEnv = { SVC_CONFIG_DIR: local.configDir, SVC_BASE_URL: limited.url, SVC_API_KEY: limited.apiKey! };
  });
  afterAll(() => limited?.stop());

  async function exhaust(): Promise<void> {
    for (;;) {
      const res = await call(limited.url, 'GET', '/api/service/user/api-keys', limited.apiKey!);
      if (res.status === 429) return;
    }
  }

  it('fails fast with --no-wait (exit 5) and when --max-wait is too short', async () => {
    await windowEndsIn(limited, 40);
    await exhaust();
    const noWait = await svc(['keys', 'list', '--no-wait'], limitedEnv);
    expect(noWait.exitCode).toBe(5);
    expect(noWait.stderr).toContain('--no-wait was given');
    expect(noWait.stderr).toMatch(/Try again in \d+ s, or leave out --no-wait to wait for it\./);
    expect(noWait.stderr).not.toContain('--max-wait');
    const short = await svc(['keys', 'list', '--max-wait', '5'], limitedEnv);
    expect(short.exitCode).toBe(5);
    expect(short.stderr).toMatch(/Try again in \d+ s, or raise --max-wait\./);
  });

  it('sleeps through Retry-After and then succeeds', async () => {
    // The window is made to end only once it is spent: spending takes real time, which the 2 s must not include.
    await windowEndsIn(limited, 59);
    await exhaust();
    await windowEndsIn(limited, 2);
    const result = await svc(['keys', 'list', '--json'], limitedEnv, { server: limited });
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toMatch(/Rate limited; retrying in [1-3] s\./);
    expect(result.slept.reduce((sum, ms) => sum + ms, 0)).toBeGreaterThanOrEqual(1000);
    expect(JSON.parse(result.stdout).keys.length).toBeGreaterThan(0);
  });
});
