// tier: in-process
/**
 * docs/contract.md §C3, advice true to the key's state: whatever svc reads
 * of a key (any status word, `enabled` or not, any expiry, any clock), it
 * says "still works" only of an enabled key that has not expired, never
 * "works again if enabled" of an expired one, and "is not revoked" (no
 * more) where it did not read the state. Then the same through the commands that
 * leave a key as it is (enable, disable, rotate --overlap, a rotation whose
 * new key was not saved, logout, profile remove, the pending-rotation
 * warning) against the reference server, with its clock moved past a key's
 * expiry rather than waited for.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { keyStatus, type KeyView } from '../../src/client/key-view.js';
import { keyState, recordedKeyState, stillDoes } from '../../src/cli/domain/key-state.js';
import { useCommandTest } from '../helpers/command-test.js';
import { freshSeedNote, SEEDS } from '../helpers/hostile-text.js';
import { call, svc } from '../helpers/in-process.js';

const FILE = 'test/invariants/key-advice.test.ts';
beforeAll(() => console.info(`key advice: ${freshSeedNote(FILE)}`));

const NOW = Date.parse('2026-06-01T00:00:00Z');
const DAY = 86_400_000;

const views: fc.Arbitrary<KeyView> = fc.record({
  id: fc.constant('key_1'),
  name: fc.constant('ci'),
  hint: fc.constant(null),
  enabled: fc.constantFrom(true, false, null),
  status: fc.constantFrom('enabled', 'disabled', 'expired', 'revoked', 'paused', null),
  workspaceId: fc.constant(null),
  createdAt: fc.constant(null),
  expiresAt: fc.option(fc.integer({ min: NOW - 400 * DAY, max: NOW + 400 * DAY })),
  expiresKnown: fc.boolean(),
  lastUsedAt: fc.constant(null),
  lastUsedKnown: fc.constant(false),
});

/** What a sentence claims of a key's working: the claims these tests hold svc to. */
const WORKS = /still works|keeps working|works again|stays valid|is not revoked/;

describe.each(SEEDS)('what svc says a key it leaves still does ($pass seed)', ({ seed }) => {
  it('from its record as read: "still works" only of an enabled key before its expiry; nothing of working for an expired one', () => {
    fc.assert(
      fc.property(views, fc.integer({ min: NOW - DAY, max: NOW + DAY }), (view, nowMs) => {
        const key = view.expiresKnown ? view : { ...view, expiresAt: null };
        const status = keyStatus(key, nowMs);
        const expired = status === 'expired' || (key.expiresAt !== null && key.expiresAt <= nowMs);
        const said = stillDoes(keyState(key, nowMs));
        if (expired) {
          expect(said).toMatch(/^has expired/);
          expect(said).not.toMatch(WORKS);
        } else if (status === 'enabled') expect(said).toMatch(/^still works until revoked/);
        else if (status === 'disabled') expect(said).toMatch(/^is disabled: it works again if enabled/);
        else expect(said).toMatch(/^is not revoked/);
        if (key.expiresAt !== null && !expired) expect(said).toContain(new Date(key.expiresAt).toISOString());
      }),
      { seed, numRuns: 500 },
    );
  });

  it('from a profile\'s record of its expiry alone: never "still works"; expired once the clock passes it', () => {
    const records = fc.oneof(fc.constant(undefined), fc.constant(null), fc.constant('not a time'), fc.integer({ min: NOW - 400 * DAY, max: NOW + 400 * DAY }).map((ms) => new Date(ms).toISOString()));
    fc.assert(
      fc.property(records, (record) => {
        const said = stillDoes(recordedKeyState(record, NOW));
        expect(said).not.toMatch(/still works|works again/);
        const at = typeof record === 'string' ? Date.parse(record) : NaN;
        if (at <= NOW) expect(said).toBe(`has expired (at ${record}) and cannot work again, enabled or not`);
        else expect(said).toMatch(/^is not revoked/);
      }),
      { seed, numRuns: 200 },
    );
  });
});

describe('through the commands, with the server clock past a key\'s expiry', () => {
  const local = useCommandTest({ plan: 'pro' });
  const advance = (days: number) => call(local.server.url, 'POST', '/_local/clock', local.server.adminToken, { advanceSeconds: days * 86_400 });
  const claims = (text: string) => text.replace(/\n {2}/g, ' ').split('\n').filter((line) => WORKS.test(line));
  const create = async (name: string, days: number) =>
    JSON.parse((await local.run('keys', 'create', name, '--expires-in', `${days}d`, '--json')).stdout).key as { id: string; secret: string };

  it('enable and disable of an expired key say it cannot work again, and offer no "until it is enabled again"', async () => {
    const key = await create('soon-gone', 1);
    await advance(2);
    for (const change of ['disable', 'enable']) {
      const result = await local.run('keys', change, key.id);
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/It has expired \(at .*\) and cannot work again, enabled or not: `svc keys rotate key_\w+` makes a new key in its place\./);
      expect(claims(result.stderr)).toEqual([]);
    }
    const live = await create('still-here', 30);
    const disabled = await local.run('keys', 'disable', live.id);
    expect(disabled.stderr).not.toContain('has expired');
  });

  it('rotate --overlap of an expired key says nothing keeps working beside the new one; of a live key, that it does', async () => {
    const expired = await create('overlap-expired', 1);
    const live = await create('overlap-live', 30);
    await advance(2);
    const onExpired = await svc(['keys', 'rotate', expired.id, '--overlap', '--yes', '--profile', 'overlap-a', '--json'], { ...local.env });
    expect(onExpired.exitCode, onExpired.stderr).toBe(0);
    expect(onExpired.stderr).toMatch(/The old key \S+ has expired \(at .*\) and cannot work again, enabled or not, so nothing uses it beside/);
    expect(claims(onExpired.stderr)).toEqual([]);
    const onLive = await svc(['keys', 'rotate', live.id, '--overlap', '--yes', '--profile', 'overlap-b', '--json'], { ...local.env });
    expect(onLive.exitCode, onLive.stderr).toBe(0);
    expect(onLive.stderr).toMatch(new RegExp(`${live.id} keeps working beside`));
  });

  it('a rotation whose new key was not saved: the old key expired is not "still works", and no revoke of it is advised', async () => {
    const key = await create('held-expired', 1);
    const login = await svc(['login', '--with-key', '--profile', 'holder'], { ...local.env, SVC_API_KEY: undefined }, { input: key.secret });
    expect(login.exitCode, login.stderr).toBe(0);
    await advance(2);
    const rotated = await local.run('keys', 'rotate', key.id, '--yes', '--to-file', `${local.configDir}/new-${key.id}.env`);
    expect(rotated.exitCode).toBe(1);
    expect(rotated.stderr).toMatch(/The old key has expired \(at .*\) and cannot work again, enabled or not\./);
    expect(rotated.stderr).toContain('Save the new key there with `svc login --profile holder`.');
    const overlap = await local.run('keys', 'rotate', key.id, '--overlap', '--yes', '--to-file', `${local.configDir}/overlap-${key.id}.env`);
    expect(overlap.exitCode).toBe(1);
    expect(overlap.stderr.replace(/\n {2}/g, ' ')).toMatch(/still holds the old key \S+, so no --overlap rotation was recorded: the new key above was not saved there\./);
    expect(claims(overlap.stderr)).toEqual([]);
    expect(rotated.stderr).not.toMatch(/revoke the old one/);
    expect(claims(rotated.stderr)).toEqual([]);
    // On a terminal, the question whether to save the new key there, withdrawn.
    const withdrawn = await local.onTerminal(['keys', 'rotate', key.id, '--to-file', `${local.configDir}/withdrawn-${key.id}.env`], [{ confirm: true }, { cancel: true }]);
    expect(withdrawn.exitCode, withdrawn.stderr).toBe(130);
    expect(withdrawn.stderr.replace(/\n {2}/g, ' ')).toMatch(/the old key \S+ has expired \(at .*\) and cannot work again, enabled or not, and profile 'holder' still holds it\./);
    expect(withdrawn.stderr).toMatch(/Save the new key with `svc login --profile holder`; or revoke the new one\./);
    expect(claims(withdrawn.stderr)).toEqual([]);
  });

  it('logout and profile remove go by the expiry the profile recorded: "is not revoked" until then, expired after, never "still works"', async () => {
    const key = await create('logged-in', 3);
    const noKey = { ...local.env, SVC_API_KEY: undefined };
    for (const [name, laterDays, said] of [
      ['before-expiry', 0, /The key is not revoked \(its recorded expiry: \S+Z\)\./],
      ['after-expiry', 30, /The key has expired \(at \S+Z\) and cannot work again, enabled or not\./],
    ] as const) {
      expect((await svc(['login', '--with-key', '--profile', name], noKey, { input: key.secret })).exitCode).toBe(0);
      const later = { deps: { now: () => Date.now() + laterDays * DAY } };
      const out = await svc(['logout', '--profile', name], noKey, later);
      expect(out.exitCode, out.stderr).toBe(0);
      expect(out.stderr).toMatch(said);
      expect(out.stderr).not.toMatch(/still works/);
      expect((await svc(['login', '--with-key', '--profile', name], noKey, { input: key.secret })).exitCode).toBe(0);
      const removed = await svc(['profile', 'remove', name], noKey, later);
      expect(removed.stderr.replace(/^✓ Removed profile '[^']+'; its key \S+ /, 'The key ')).toMatch(said);
    }
  });

  it('the pending-rotation warning: an old key that works "still works beside" the new one; one that expired is replaced by it', async () => {
    const noKey = { ...local.env, SVC_API_KEY: undefined };
    const pending = async (name: string, days: number, expireFirst: boolean) => {
      const key = await create(name, days);
      const profile = ['--profile', name];
      expect((await svc(['login', '--with-key', ...profile], noKey, { input: key.secret })).exitCode).toBe(0);
      if (expireFirst) await advance(days + 1);
      // With the service's own key: an expired key cannot rotate itself.
      const rotated = await svc(['keys', 'rotate', key.id, '--overlap', '--yes', '--save', '--to-file', `${local.configDir}/${name}.env`, ...profile], local.env);
      expect(rotated.exitCode, rotated.stderr).toBe(0);
      const listed = await svc(['keys', 'list', ...profile], noKey);
      expect(listed.exitCode, listed.stderr).toBe(0);
      return { id: key.id, said: listed.stderr.replace(/\n {2}/g, ' '), viewed: (await svc(['keys', 'view', key.id, ...profile], noKey)).stderr };
    };
    const live = await pending('pending-live', 30, false);
    expect(live.said).toMatch(new RegExp(`${live.id} still works beside key_\\w+\\.`));
    // keys view reads no list: the old key's state is not known, and nothing is claimed of it.
    expect(live.viewed.replace(/\n {2}/g, ' ')).toMatch(new RegExp(`${live.id} is kept beside key_\\w+\\.`));
    const expired = await pending('pending-expired', 1, true);
    expect(expired.said).toMatch(new RegExp(`${expired.id} has expired \\(at .*\\) and cannot work again, enabled or not; key_\\w+ replaces it\\.`));
    expect(claims(expired.said)).toEqual([]);
  });
});
