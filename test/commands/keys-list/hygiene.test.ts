// tier: in-process
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startLocalServer, svc, tempConfigDir, type LocalServer } from '../../helpers/in-process.js';

// docs/contract.md §C8: see what expires, clean up what is dead, rotate without a
// gap. Time moves on the reference server's clock, never by sleeping.

const DAY = 86_400_000;

async function serverNow(server: LocalServer): Promise<number> {
  return Date.parse((await call(server.url, 'GET', '/_local/clock', server.adminToken)).json.now);
}

async function advance(server: LocalServer, ms: number): Promise<void> {
  await call(server.url, 'POST', '/_local/clock', server.adminToken, { advanceSeconds: ms / 1000 });
}

describe('list filters, view and prune', () => {
  let server: LocalServer;
  const config = tempConfigDir();
  const env = () => ({ SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey!, SVC_CONFIG_DIR: config.dir });
  const ids: Record<string, string> = {};
  const create = async (name: string, expiresAt?: number) => {
    const args = ['keys', 'create', name, '--json', ...(expiresAt ? ['--expires-at', new Date(expiresAt).toISOString()] : [])];
    const result = await svc(args, env());
    expect(result.exitCode, result.stderr).toBe(0);
    ids[name] = JSON.parse(result.stdout).key.id;
  };

  beforeAll(async () => {
    server = await startLocalServer({ plan: 'pro' });
    await create('expired-key', (await serverNow(server)) + 3_600_000);
    await advance(server, 2 * 3_600_000);
    const now = await serverNow(server);
    await create('soon', now + DAY);
    // Just inside: a Date header has whole seconds, so the exact edge is the unit tests' (key-filters).
    await create('edge', now + 7 * DAY - 5_000);
    await create('later', now + 7 * DAY + 3_600_000);
    await create('forever');
    await create('off');
    expect((await svc(['keys', 'disable', ids.off!], env())).exitCode).toBe(0);
  });
  afterAll(async () => {
    await server.stop();
    config.remove();
  });

  const listed = async (...args: string[]) => {
    const result = await svc(['keys', 'list', '--json', ...args], env());
    expect(result.exitCode, result.stderr).toBe(0);
    return (JSON.parse(result.stdout).keys as { name: string }[]).map((k) => k.name).sort();
  };

  it('--expiring takes what expires within it, expired keys included', async () => {
    expect(await listed('--expiring', '7d')).toEqual(['edge', 'expired-key', 'soon']);
    expect(await listed('--expiring', '2d')).toEqual(['expired-key', 'soon']);
  });

  it('--status and --name, alone and combined with --expiring', async () => {
    expect(await listed('--status', 'disabled')).toEqual(['off']);
    expect(await listed('--status', 'expired')).toEqual(['expired-key']);
    expect(await listed('--name', 'ED')).toEqual(['edge', 'expired-key']);
    expect(await listed('--expiring', '7d', '--name', 'e', '--status', 'enabled')).toEqual(['edge']);
    const bad = await svc(['keys', 'list', '--status', 'gone'], env());
    expect(bad.exitCode).toBe(2);
  });

  it('--json keeps the API\'s shape; piped rows follow the filter too', async () => {
    const result = await svc(['keys', 'list', '--json', '--name', 'forever'], env());
    expect(Object.keys(JSON.parse(result.stdout))).toEqual(['keys']);
    const tsv = await svc(['keys', 'list', '--status', 'disabled'], env());
    expect(tsv.stdout.split('\n').slice(1)).toEqual([expect.stringContaining(`${ids.off}\toff\t`)]);
  });

  it('keys view shows one record, as TSV fields or as the server\'s JSON; an unknown id is exit 4', async () => {
    const tsv = await svc(['keys', 'view', ids.soon!], env());
    expect(tsv.exitCode).toBe(0);
    expect(tsv.stdout).toContain(`id\t${ids.soon}\nname\tsoon\n`);
    expect(tsv.stdout).toMatch(/\nexpires\t\d{4}-\d\d-\d\dT/);
    const json = JSON.parse((await svc(['keys', 'view', ids.soon!, '--json'], env())).stdout);
    expect(json).toMatchObject({ id: ids.soon, name: 'soon', status: 'enabled' });
    expect((await svc(['keys', 'view', 'key_nope'], env())).exitCode).toBe(4);
  });

  it('prune needs a criterion, lists with --dry-run, needs --yes without a terminal', async () => {
    expect((await svc(['keys', 'prune'], env())).exitCode).toBe(2);
    const dry = await svc(['keys', 'prune', '--expired', '--dry-run'], env());
    expect(dry.exitCode).toBe(0);
    expect(dry.stdout).toContain(ids['expired-key']);
    expect(dry.stderr).toContain('would be revoked');
    const noYes = await svc(['keys', 'prune', '--expired'], env());
    expect(noYes.exitCode).toBe(2);
    expect(await listed('--status', 'expired')).toEqual(['expired-key']);
  });

  it('prune revokes what matches every criterion, and reports it in --json', async () => {
    const both = await svc(['keys', 'prune', '--expired', '--disabled', '--yes', '--json'], env());
    expect(JSON.parse(both.stdout)).toMatchObject({ change: 'revoke', changed: [], matched: [] });
    const result = await svc(['keys', 'prune', '--disabled', '--yes', '--json'], env());
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ changed: [{ id: ids.off, revoked: true }], alreadyGone: [], failed: [], matched: [{ id: ids.off }] });
    const expired = await svc(['keys', 'prune', '--expired', '--yes'], env());
    expect(expired.stderr).toContain(`Revoked ${ids['expired-key']}`);
    expect(await listed()).toEqual(['bootstrap', 'edge', 'forever', 'later', 'soon']);
  });

  it('prune --unused-for goes by last use, or creation for a key never used', async () => {
    await advance(server, 100 * DAY);
    const result = await svc(['keys', 'prune', '--unused-for', '90d', '--yes', '--json'], env());
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).changed).toHaveLength(4);
    expect(await listed()).toEqual(['bootstrap']);
  });
});
