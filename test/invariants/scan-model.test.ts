// tier: in-process
/**
 * svc scan (docs/contract.md §C11) under random faults: whatever the server
 * fails with, and wherever (the user's list, the found key's own requests,
 * the revokes), a key is reported live only if it works, not live only if
 * it does not, and otherwise not checked; --revoke ends only keys that
 * worked, never one it reports as not revoked, and every key it reports
 * revoked is refused afterwards. The world is made through the API and the
 * reference server's admin routes; svc's sleeps are not slept.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyHint } from '../../src/contract/key-format.js';
import { call, startLocalServer, svc, tempConfigDir, type LocalServer } from '../helpers/in-process.js';

type Truth = 'live' | 'disabled' | 'expired' | 'revoked' | 'fake' | 'stranger';
const WORKS: ReadonlySet<Truth> = new Set(['live', 'stranger']);

const fault = fc.record({
  method: fc.constantFrom('GET', 'DELETE'),
  path: fc.constantFrom('/user/api-keys', '/user/api-keys/*', '/user/api-keys*'),
  then: fc.constantFrom('status', 'reset'),
  status: fc.constantFrom(429, 500, 502, 503),
  retryAfter: fc.constantFrom('1', '2', null),
  times: fc.integer({ min: 1, max: 4 }),
  after: fc.boolean(),
});

describe('svc scan under random faults', () => {
  let server: LocalServer;
  const config = tempConfigDir();
  const dir = mkdtempSync(join(tmpdir(), 'svc-scan-model-'));
  beforeAll(async () => {
    server = await startLocalServer({ plan: 'pro' });
  });
  afterAll(async () => {
    await server.stop();
    config.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  it('never reports a working key as not live, or one that does not work as live, and revokes only what worked', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<Truth>('live', 'disabled', 'expired', 'revoked', 'fake', 'stranger'), { minLength: 1, maxLength: 6 }),
        fc.array(fault, { maxLength: 4 }),
        fc.boolean(),
        async (truths, faults, revoke) => {
          const world = (await call(server.url, 'POST', '/_local/reset', server.adminToken)).json;
          const api = (method: string, path: string, body?: unknown, key = world.apiKey) => call(world.url, method, `/api/service${path}`, key, body);
          const keys: { truth: Truth; secret: string; id: string | null }[] = [];
          // The clock's offset outlives a reset: an expiry is set an hour past the server's now.
          const now = Date.parse((await call(world.url, 'GET', '/_local/clock', server.adminToken)).json.now);
          for (const [i, truth] of truths.entries()) {
            if (truth === 'fake') {
              keys.push({ truth, secret: `sk_${String(i).padStart(64, 'F')}`, id: null });
              continue;
            }
            if (truth === 'stranger') {
              const other = (await call(world.url, 'POST', '/_local/users', server.adminToken, { name: `u${i}`, plan: 'pro' })).json;
              keys.push({ truth, secret: other.apiKey.secret, id: other.apiKey.id });
              continue;
            }
            const expiresAt = truth === 'expired' ? new Date(now + 3_600_000).toISOString() : null;
            const made = (await api('POST', '/user/api-keys', { name: `k${i}`, expiresAt })).json;
            expect(made.secret).toBeDefined();
            keys.push({ truth, secret: made.secret, id: made.id });
            if (truth === 'disabled') await api('PATCH', `/user/api-keys/${made.id}`, { enabled: false });
            if (truth === 'revoked') await api('DELETE', `/user/api-keys/${made.id}`);
          }
          await call(world.url, 'POST', '/_local/clock', server.adminToken, { advanceSeconds: 7200 });
          const file = join(dir, 'leak.env');
          writeFileSync(file, keys.map((k, i) => `K${i}=${k.secret}`).join('\n'));
          const rules = faults.map(({ then, status, retryAfter, after, ...rest }) => ({ ...rest, then, ...(then === 'status' ? { status, retryAfter } : {}), after: then === 'status' && after }));
          if (rules.length > 0) expect((await call(world.url, 'POST', '/_local/faults', server.adminToken, { rules })).status).toBe(201);

          const result = await svc(['scan', file, '--json', ...(revoke ? ['--revoke', '--yes'] : [])], { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: world.url, SVC_API_KEY: world.apiKey });
          await call(world.url, 'DELETE', '/_local/faults', server.adminToken);
          expect([1, 6, 7, 8], result.stderr).toContain(result.exitCode);
          if (result.exitCode === 6) return;
          const doc = JSON.parse(result.stdout);
          for (const key of keys) {
            const told = doc.keys.find((k: { hint: string }) => k.hint === keyHint(key.secret));
            expect(told, `${key.truth} key not reported`).toBeDefined();
            if (told.state === 'live') expect(WORKS.has(key.truth), `${key.truth} reported live`).toBe(true);
            if (told.state === 'not-live') expect(WORKS.has(key.truth), `${key.truth} reported not live`).toBe(false);
            const worksNow = (await api('GET', '/user/api-keys', undefined, key.secret)).status === 200;
            if (told.revoked === 'this-run' || told.revoked === 'already-gone') expect(worksNow, `${key.truth} reported revoked, still works`).toBe(false);
            if (!WORKS.has(key.truth)) {
              expect(told.revoked).toBeNull();
              // Left as it was: a disabled or expired key is still there, not revoked.
              if (key.truth === 'disabled' || key.truth === 'expired') expect((await api('GET', `/user/api-keys/${key.id}`)).status).toBe(200);
            }
          }
        },
      ),
      { numRuns: 30 },
    );
  });
});
