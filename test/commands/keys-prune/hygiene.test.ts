// tier: in-process
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { svc } from '../../helpers/in-process.js';
import { records, startSpecServer, type SpecServer } from '../../helpers/spec-server.js';

// docs/contract.md §C8: see what expires, clean up what is dead, rotate without a
// gap. Time moves on the reference server's clock, never by sleeping.

describe('prune never touches the key in use', () => {
  let server: SpecServer;
  beforeAll(async () => {
    // A server that never says a key was used: every key looks unused.
    server = await startSpecServer({ record: (k, now) => ({ ...records.full(k, now), lastUsedAt: null, createdAt: '2020-01-01T00:00:00.000Z' }) });
    server.addKey('stale');
    server.addKey('also-stale');
  });
  afterAll(() => server.close());

  it('leaves it alone and says so; a failed revoke is exit 1', async () => {
    const env = { SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey };
    server.rules.push({ method: 'DELETE', times: 1, work: false, then: { status: 400, body: '{"error":"not now"}' } });
    const result = await svc(['keys', 'prune', '--unused-for', '30d', '--yes'], env);
    expect(result.stderr).toContain('it is the key svc is using');
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('1 of 2 keys could not be revoked');
    expect(server.keys.size).toBe(2);
    expect([...server.keys.values()].some((k) => k.secret === server.apiKey)).toBe(true);
  });
});
