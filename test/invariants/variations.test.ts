// tier: in-process
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { records, startSpecServer, type SpecServer, type Variation } from '../helpers/spec-server.js';
import { svc, tempConfigDir } from '../helpers/in-process.js';

// docs/contract.md §C6: the real service follows the spec, which leaves paths, field
// names, ids and two of our endpoints open. Against each choice a service may
// make, no command crashes, prints "undefined", loses a secret or reports
// the wrong cause.

const HOUR = 3_600_000;
let counter = 0;

const variations: [string, Variation][] = [
  ['the spec and nothing more', {}],
  ['UUID ids', { newId: () => randomUUID() }],
  ['numeric ids', { newId: () => 1000 + ++counter }],
  ['snake_case fields and epoch-second times', { record: records.snakeEpochSeconds }],
  ['epoch-millisecond times and unknown fields', { record: records.epochMilliseconds }],
  ['our own reading (every endpoint, every field)', { record: records.full, getOne: true, workspace: { id: 'ws_1', name: 'Team', plan: 'pro', requestsPerMinute: 1000 } }],
  ['a workspace with other fields', { workspace: { id: 7, tier: 'pro' }, getOne: true }],
  ['a 200 for a create, secret under "key"', { createdStatus: 200, created: (r, secret) => ({ ...r, key: secret }) }],
  ['a clock three hours ahead of ours', { clockOffsetMs: 3 * HOUR, record: records.full }],
  ['a clock three hours behind ours', { clockOffsetMs: -3 * HOUR }],
  ['the list in pages of two, each naming the next by next_cursor', { pages: { size: 2, style: 'cursor' } }],
  ['the list in pages of two, with has_more and page numbers', { pages: { size: 2, style: 'has-more' }, getOne: true }],
  ['the list in pages of two, the next in a Link header', { pages: { size: 2, style: 'link' }, record: records.full }],
  ['the list in pages of two, each after an empty page that names it (AIP-158)', { pages: { size: 2, style: 'empty-pages' }, getOne: true }],
];

const BROKEN = /undefined|NaN|Invalid (time|Date)|\[object Object\]|TypeError|Cannot read/;
/** Secrets and their hints are random letters and digits: one may spell NaN. */
const withoutKeys = (text: string) => text.replace(/sk_[A-Za-z0-9]{64}|sk_[A-Za-z0-9]{4}…[A-Za-z0-9]{4}/g, 'sk_…');

describe.each(variations)('against a service with %s', (_, variation) => {
  const config = tempConfigDir();
  let server: SpecServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    server = await startSpecServer(variation);
    env = { SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey, SVC_CONFIG_DIR: config.dir };
  });
  afterAll(async () => {
    await server.close();
    config.remove();
  });

  const run = async (args: string[], exitCode = 0) => {
    const result = await svc(args, env);
    expect(withoutKeys(`${result.stdout}\n${result.stderr}`)).not.toMatch(BROKEN);
    expect(result.exitCode, `svc ${args.join(' ')}\n${result.stderr}`).toBe(exitCode);
    return result;
  };
  const keyByName = (name: string) => [...server.keys.values()].find((k) => k.name === name)!;

  it('creates keys, and the secret is what reaches stdout', async () => {
    const plain = await run(['keys', 'create', 'plain']);
    expect(plain.stdout).toBe(keyByName('plain').secret);
    const expiring = await run(['keys', 'create', 'expiring', '--expires-in', '1h']);
    expect(expiring.stdout).toBe(keyByName('expiring').secret);
    const lifetime = keyByName('expiring').expiresAt! - keyByName('expiring').createdAt;
    // svc's mark pulls an hour's expiry back by under 30 s, never later than asked.
    expect(lifetime - HOUR).toBeLessThan(5_000);
    expect(HOUR - lifetime).toBeLessThan(30_000 + 5_000);
  });

  it('lists keys as TSV, and --json as the server sent them', async () => {
    const tsv = await run(['keys', 'list']);
    const lines = tsv.stdout.split('\n');
    expect(lines).toHaveLength(server.keys.size + 1);
    for (const key of server.keys.values()) expect(tsv.stdout).toContain(`${key.id}\t${key.name}\t`);
    expect(lines.find((l) => l.includes('\texpiring\t'))!.split('\t')[3]).toBe('enabled');
    const json = await run(['keys', 'list', '--json']);
    expect(JSON.parse(json.stdout).keys).toHaveLength(server.keys.size);
  });

  it('disables, says it is disabled on a repeat, and enables again', async () => {
    const { id } = keyByName('plain');
    expect((await run(['keys', 'disable', id])).stderr).toContain(`Disabled ${id}`);
    expect(keyByName('plain').enabled).toBe(false);
    expect((await run(['keys', 'disable', id])).stderr).toContain(`${id} (plain) is disabled.`);
    expect((await run(['keys', 'enable', id])).stderr).toContain(`Enabled ${id}`);
    expect(keyByName('plain').enabled).toBe(true);
  });

  it('rotates: a new secret with the same lifetime, and the old key revoked', async () => {
    const old = keyByName('expiring');
    const result = await run(['keys', 'rotate', '--yes', old.id]);
    const fresh = [...server.keys.values()].find((k) => k.name === 'expiring' && k.id !== old.id)!;
    expect(result.stdout).toBe(fresh.secret);
    // A record in epoch seconds tells the expiry to the second, no finer.
    expect(Math.abs(fresh.expiresAt! - old.expiresAt!)).toBeLessThan(1_000);
    expect(server.keys.has(old.id)).toBe(false);
  });

  it('revokes, and a second revoke is "not found" (exit 4)', async () => {
    const { id } = keyByName('plain');
    expect((await run(['keys', 'revoke', id, '--yes'])).stderr).toContain(`Revoked ${id}`);
    await run(['keys', 'revoke', id, '--yes'], 4);
  });

  it('pings, and status shows what the server tells', async () => {
    await run(['keys', 'ping']);
    const status = await run(['status']);
    expect(status.stdout).toContain('valid');
    const json = JSON.parse((await run(['status', '--json'])).stdout);
    expect(json.key.hint).toMatch(/^sk_/);
  });

  it('opens the interactive manager on its first screen', async () => {
    const session = await svc([], env, { tty: true, columns: 120 });
    expect(session.exitCode, session.stderr).toBe(0);
    expect(withoutKeys(session.stderr)).not.toMatch(BROKEN);
    expect(session.stderr).toContain('bootstrap');
    if (variation.clockOffsetMs !== undefined) expect(session.stderr).toMatch(/in 1 hour/);
  });
});

describe.each([3, -3])("a new key's lifetime from a server whose clock is %i hours off", (hours) => {
  it('is told on the server\'s clock, on a terminal', async () => {
    const server = await startSpecServer({ clockOffsetMs: hours * HOUR });
    try {
      const result = await svc(['keys', 'create', 'on-a-terminal', '--expires-in', '1h'], { SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey }, { tty: true });
      expect(result.exitCode).toBe(0);
      expect(result.stderr).toContain('only time this secret is shown');
      expect(result.stderr).toContain("Created key 'on-a-terminal'");
      expect(result.stderr).toContain('expires in 1 hour');
    } finally {
      await server.close();
    }
  });
});

describe('a service whose paths differ', () => {
  let server: SpecServer;
  const config = tempConfigDir();
  beforeAll(async () => {
    server = await startSpecServer({ createPath: '/user/keys' });
  });
  afterAll(() => server.close());
  const env = () => ({ SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey, SVC_CONFIG_DIR: config.dir });

  it('a create path that 404s is "not offered" (exit 1), not a missing key', async () => {
    const result = await svc(['keys', 'create', 'ci'], env());
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('does not offer POST /api/service/user/api-keys (404)');
    expect(result.stderr).toContain('svc api');
    expect(result.stderr).not.toContain('No key with id');
  });

  it('a base URL that already ends in /api/service is trimmed, with a warning', async () => {
    const result = await svc(['keys', 'list'], { ...env(), SVC_BASE_URL: `${server.url}/api/service/` });
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain(`SVC_BASE_URL ends in /api/service, which svc adds to every path itself: using ${server.url}`);
    expect(server.seen.at(-1)).toBe('GET /api/service/user/api-keys');
  });

  it('a base URL that is not an absolute http(s) URL is a usage error before any request', async () => {
    const before = server.seen.length;
    for (const url of ['127.0.0.1:8788', 'ftp://example.com', 'not a url']) {
      const result = await svc(['keys', 'list', '--base-url', url], env());
      expect(result.exitCode, url).toBe(2);
      expect(result.stderr).toContain('--base-url');
    }
    expect(server.seen.length).toBe(before);
  });
});

describe('a server that is not the service at all', () => {
  let url: string;
  let close: () => void;
  beforeAll(async () => {
    // What `python3 -m http.server` answers for every path it does not have.
    const server = createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html;charset=utf-8' });
      res.end('<!DOCTYPE HTML><html><body><h1>Error response</h1><p>Error code: 404</p></body></html>\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  afterAll(() => close());

  it.each([['status'], ['keys', 'list'], ['keys', 'revoke', 'k1', '--yes'], ['keys', 'create', 'x']])('svc %s names it as such, exit 1', async (...args) => {
    const result = await svc(args, { SVC_BASE_URL: url, SVC_API_KEY: `sk_${'a'.repeat(64)}` });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("with text/html;charset=utf-8, not the service's JSON");
    expect(result.stderr).toContain(`Is ${url} the service's address?`);
  });
});

describe('a rate limit from a server whose clock is hours off', () => {
  it('reads an HTTP-date Retry-After against the same answer\'s Date, not against our clock', async () => {
    const server = await startSpecServer({ clockOffsetMs: 3 * HOUR });
    try {
      server.rules.push({
        method: 'GET',
        times: 1,
        work: false,
        then: {
          status: 429,
          body: '{"error":"Rate limit exceeded","code":"RATE_LIMITED"}',
          headers: (now) => ({ 'retry-after': new Date(now + 1_000).toUTCString() }),
        },
      });
      const result = await svc(['keys', 'list', '--max-wait', '5'], { SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(server.seen.filter((r) => r === 'GET /api/service/user/api-keys')).toHaveLength(2);
    } finally {
      await server.close();
    }
  });
});
