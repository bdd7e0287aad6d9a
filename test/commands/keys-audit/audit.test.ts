// tier: in-process
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startLocalServer, svc, tempConfigDir, type LocalServer } from '../../helpers/in-process.js';
import { records, startSpecServer, type SpecServer } from '../../helpers/spec-server.js';

// docs/contract.md §C8 (`svc keys audit`) and §C5 (its exit codes). Time moves on the
// reference server's clock, never by sleeping.

const DAY = 86_400_000;

interface AuditedKey {
  name: string;
  breaks: { rule: string; field: string; value: string | null }[];
  notJudged: { rule: string; missing: string }[];
}

const byName = (keys: AuditedKey[]) =>
  Object.fromEntries(keys.map((k) => [k.name, { breaks: k.breaks.map((b) => b.rule), notJudged: k.notJudged.map((n) => n.rule) }]));

describe('keys audit against the reference server', () => {
  let server: LocalServer;
  const config = tempConfigDir();
  const env = () => ({ SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey!, SVC_CONFIG_DIR: config.dir });
  const ids: Record<string, string> = {};
  const create = async (name: string, ...args: string[]) => {
    const result = await svc(['keys', 'create', name, '--json', ...args], env());
    expect(result.exitCode, result.stderr).toBe(0);
    ids[name] = JSON.parse(result.stdout).key.id;
  };
  const advance = (ms: number) => call(server.url, 'POST', '/_local/clock', server.adminToken, { advanceSeconds: ms / 1000 });
  const audit = (...args: string[]) => svc(['keys', 'audit', ...args], env());

  beforeAll(async () => {
    server = await startLocalServer({ plan: 'pro' });
    await create('old-forever');
    await create('gone-soon', '--expires-in', '110d');
    await advance(60 * DAY);
    await create('young', '--expires-in', '60d');
    await create('off');
    expect((await svc(['keys', 'disable', ids.off!], env())).exitCode).toBe(0);
    await create('dead', '--expires-in', '1d');
    await advance(40 * DAY);
    // The bootstrap key is the one svc uses, so its last use is now; none of the others was ever used.
  });
  afterAll(async () => {
    await server.stop();
    config.remove();
  });

  it('judges every rule on the server\'s clock and names the rules each key breaks; expired keys are left out', async () => {
    const result = await audit('--max-age', '90d', '--require-expiry', '--expiring-within', '14d', '--unused-for', '30d', '--json');
    expect(result.exitCode, result.stderr).toBe(1);
    const document = JSON.parse(result.stdout);
    expect(document).toMatchObject({ passed: false, audited: 5, skipped: { expired: 1, revoked: 0, disabled: 0 }, incomplete: null });
    expect(byName(document.keys)).toEqual({
      'old-forever': { breaks: ['max-age', 'require-expiry', 'unused-for'], notJudged: [] },
      'gone-soon': { breaks: ['max-age', 'expiring-within', 'unused-for'], notJudged: [] },
      young: { breaks: ['unused-for'], notJudged: [] },
      off: { breaks: ['require-expiry', 'unused-for'], notJudged: [] },
      bootstrap: { breaks: ['max-age', 'require-expiry'], notJudged: [] },
    });
    const forever = document.keys.find((k: AuditedKey) => k.name === 'old-forever');
    expect(forever.breaks).toContainEqual({ rule: 'require-expiry', field: 'expiresAt', value: null });
    expect(forever.record).toMatchObject({ id: ids['old-forever'], name: 'old-forever' });
    expect(result.stderr).toContain('error: 5 of the 5 keys audited break the policy (max-age 3, require-expiry 3, expiring-within 1, unused-for 4).');
  });

  it('exit 0 when every key passes a policy, each rule at a time', async () => {
    const result = await audit('--max-age', '120d');
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain('✓ Audited 5 keys (1 expired left out): every key passes.');
    expect(result.stdout).toBe('ID\tNAME\tKEY\tSTATUS\tBREAKS\tNOT JUDGED\tCREATED\tEXPIRES\tLAST USED');
    expect((await audit('--expiring-within', '7d')).exitCode).toBe(0);
    expect((await audit('--unused-for', '101d')).exitCode).toBe(0);
  });

  it('piped: one row per key found, the rules comma-separated and the times ISO', async () => {
    const result = await audit('--require-expiry', '--max-age', '90d');
    expect(result.exitCode).toBe(1);
    const rows = result.stdout.split('\n').slice(1).map((line) => line.split('\t'));
    expect(rows.find((r) => r[0] === ids['old-forever'])).toEqual([
      ids['old-forever'],
      'old-forever',
      expect.stringMatching(/^sk_/),
      'enabled',
      'max-age,require-expiry',
      '',
      expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      '',
      '',
    ]);
    expect(rows.map((r) => r[1]).sort()).toEqual(['bootstrap', 'gone-soon', 'off', 'old-forever']);
  });

  it('on a terminal: what broke each rule, the key in use starred', async () => {
    const result = await svc(['keys', 'audit', '--require-expiry', '--max-age', '90d'], env(), { tty: true, columns: 160 });
    expect(result.exitCode).toBe(1);
    const line = (name: string) => result.stdout.split('\n').find((l) => l.includes(` ${name} `)) ?? '';
    expect(line('old-forever')).toMatch(/ enabled +max-age 3 months, require-expiry +- *$/);
    expect(line('bootstrap')).toMatch(/^\* key_/);
    expect(result.stderr).toContain('* the key svc is using');
  });

  it('disabled keys are audited unless --skip-disabled; nothing is changed on the server', async () => {
    const logged = async () => (await call(server.url, 'GET', '/_local/requests?limit=1000', server.adminToken)).json.requests as { method: string; path: string }[];
    const before = (await logged()).length;
    const skipped = await audit('--require-expiry', '--skip-disabled', '--json');
    const document = JSON.parse(skipped.stdout);
    expect(document.skipped).toEqual({ expired: 1, revoked: 0, disabled: 1 });
    expect(document.keys.map((k: AuditedKey) => k.name)).not.toContain('off');
    const after = await logged();
    const made = after.slice(0, after.length - before);
    expect(made.length).toBeGreaterThan(0);
    expect(made.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('a policy is required (exit 2); a bad duration is a usage error', async () => {
    const none = await audit();
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('Say what the policy is');
    expect((await audit('--max-age', 'soon')).exitCode).toBe(2);
  });

  it('a rejected key is exit 3, as for every command', async () => {
    const result = await svc(['keys', 'audit', '--require-expiry'], { ...env(), SVC_API_KEY: `sk_${'x'.repeat(64)}` });
    expect(result.exitCode).toBe(3);
  });
  it('time moving on breaks what passed', async () => {
    expect((await audit('--expiring-within', '7d', '--json')).exitCode).toBe(0);
    await advance(4 * DAY);
    const later = await audit('--expiring-within', '7d', '--json');
    expect(later.exitCode).toBe(1);
    expect(byName(JSON.parse(later.stdout).keys)).toEqual({ 'gone-soon': { breaks: ['expiring-within'], notJudged: [] } });
  });
});

describe('keys audit on a server that does not show every field', () => {
  let server: SpecServer;
  beforeAll(async () => {
    // The spec's plainest record: no last use at all, so --unused-for cannot judge any key.
    server = await startSpecServer({ record: records.plain });
    server.addKey('ci', Date.now() + 10 * DAY);
  });
  afterAll(() => server.close());
  const env = () => ({ SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey });

  it('lists keys a rule could not judge; they do not silently pass, and --strict fails the audit for them', async () => {
    const lenient = await svc(['keys', 'audit', '--unused-for', '30d', '--json'], env());
    expect(lenient.exitCode, lenient.stderr).toBe(0);
    const document = JSON.parse(lenient.stdout);
    expect(document.passed).toBe(true);
    expect(document.keys).toHaveLength(2);
    expect(document.keys[0].notJudged).toEqual([{ rule: 'unused-for', missing: 'lastUsedAt' }]);
    expect(lenient.stderr).toContain('2 keys could not be judged by every rule (unused-for 2)');
    expect(lenient.stderr).toContain('they are listed, not counted as passing; --strict fails the audit for them');

    const strict = await svc(['keys', 'audit', '--unused-for', '30d', '--strict', '--json'], env());
    expect(strict.exitCode).toBe(1);
    expect(JSON.parse(strict.stdout).passed).toBe(false);
    expect(strict.stderr).toContain('2 of the 2 keys audited could not be judged, and --strict was given.');
  });

  it('on a terminal, says why each key could not be judged', async () => {
    const result = await svc(['keys', 'audit', '--unused-for', '30d', '--require-expiry'], env(), { tty: true, columns: 200 });
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toMatch(/ enabled +require-expiry +unused-for \(no last use\) /);
  });

  it('a key with no creation time cannot be judged by --max-age', async () => {
    const bare = await startSpecServer({ record: records.bare });
    try {
      const result = await svc(['keys', 'audit', '--max-age', '1d', '--json'], { SVC_BASE_URL: bare.url, SVC_API_KEY: bare.apiKey });
      expect(result.exitCode).toBe(0);
      expect(JSON.parse(result.stdout).keys[0].notJudged).toEqual([{ rule: 'max-age', missing: 'createdAt' }]);
    } finally {
      await bare.close();
    }
  });
});

describe('keys audit: exit 1 is only "the policy is broken"', () => {
  it('a server that cannot be reached is exit 6, not 1', async () => {
    const down = await startLocalServer();
    const url = down.url;
    const key = down.apiKey!;
    await down.stop();
    const result = await svc(['keys', 'audit', '--require-expiry'], { SVC_BASE_URL: url, SVC_API_KEY: key });
    expect(result.exitCode).toBe(6);
    expect(result.stderr).toContain('Could not get an answer from');
    expect(result.stderr).toContain('The audit did not finish (exit 6).');
  });

  it('a server error is exit 6; a list that may lack keys cannot pass (exit 6) but can fail (exit 1)', async () => {
    const server = await startSpecServer({ record: records.full, pages: { size: 1, style: 'token' } });
    try {
      const env = { SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey };
      server.addKey('older');
      const passing = await svc(['keys', 'audit', '--max-age', '90d', '--json'], env);
      expect(passing.exitCode).toBe(6);
      expect(JSON.parse(passing.stdout).passed).toBe(false);
      expect(passing.stderr).toContain('The key list may be incomplete');
      const failing = await svc(['keys', 'audit', '--require-expiry'], env);
      expect(failing.exitCode).toBe(1);
      server.rules.push({ method: 'GET', times: 10, then: { status: 500, body: '{"error":"boom"}' } });
      const broken = await svc(['keys', 'audit', '--require-expiry', '--max-wait', '0'], env);
      expect(broken.exitCode).toBe(6);
    } finally {
      await server.close();
    }
  });
});
