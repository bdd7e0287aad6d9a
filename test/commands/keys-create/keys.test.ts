// tier: in-process
import { describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../../helpers/in-process.js';

const local = useLocalServer({ plan: 'pro' });

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

  it("prints the API's document under `key` with --json, secret included", async () => {
    const result = await svc(['keys', 'create', 'json-key', '--expires-in', '30d', '--json'], local.env);
    expect(result.exitCode).toBe(0);
    const document = JSON.parse(result.stdout);
    expect(document.delivered).toEqual([]);
    const created = document.key;
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
