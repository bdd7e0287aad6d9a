// tier: in-process
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startLocalServer, svc, useLocalServer, windowEndsIn, type LocalServer } from '../helpers/in-process.js';

const local = useLocalServer({ plan: 'pro' });

const NO_STACK = /\n\s+at .+:\d+:\d+/;

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

  it.each([
    { where: 'on a terminal', tty: true, shown: true },
    { where: 'piped', tty: false, shown: false },
  ])('with --quiet, the wait shows its countdown $where only, cleared once it ends', async ({ tty, shown }) => {
    await windowEndsIn(limited, 59);
    await exhaust();
    await windowEndsIn(limited, 2);
    const result = await svc(['keys', 'list', '--json', '--quiet'], limitedEnv, { server: limited, tty });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).keys.length).toBeGreaterThan(0);
    if (shown) {
      expect(result.stderr).toMatch(/^\r\x1b\[2KRate limited: retrying in [1-3] s \(Ctrl-C to stop\)/);
      expect(result.stderr.endsWith('\r\x1b[2K')).toBe(true);
    } else {
      expect(result.stderr).toBe('');
    }
  });
});
