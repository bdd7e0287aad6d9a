// tier: in-process
/**
 * Issue 36: svc changes only the keys the person named, and leaves a key
 * alone when it cannot tell whether it is the key in use. Each case here
 * failed before the change that made it hold.
 */
import { describe, expect, it } from 'vitest';
import { svc, tempConfigDir } from '../helpers/in-process.js';
import { scriptedPrompter } from '../helpers/prompter.js';
import { records, useSpecServer, type SpecKey } from '../helpers/spec-server.js';

const config = tempConfigDir();
const spec = useSpecServer(config);
const { start } = spec;

const DAY = 86_400_000;

const inUse = () => [...spec.server.keys.values()].find((k) => k.secret === spec.server.apiKey)!;
const revokes = () => spec.server.seen.filter((r) => r.startsWith('DELETE') || r.startsWith('PATCH'));

/** Every key made a month ago and never used since, as the server reports it (it does not track use). */
function aged(...keys: SpecKey[]) {
  for (const key of keys) key.createdAt = Date.now() - 30 * DAY;
}

/** The fields svc reads, with the hint written another way and no last use. */
const hinted = (hint: (secret: string) => string | undefined) => (k: SpecKey, nowMs: number) => {
  const record = { ...records.full(k, nowMs), lastUsedAt: null } as Record<string, unknown>;
  const shown = hint(k.secret);
  if (shown === undefined) delete record.hint;
  else record.hint = shown;
  return record;
};

describe('the key in use, where the server writes hints another way', () => {
  it.each([
    ['ASCII dots', (s: string) => `sk_${s.slice(3, 7)}...${s.slice(-4)}`],
    ['a mask and the last four', (s: string) => `****${s.slice(-4)}`],
    ['the last four alone', (s: string) => s.slice(-4)],
    ['no hint at all', () => undefined],
    // In svc's form, but no listed key has the hint of the key in use: the server writes hints its own way.
    ['svc\'s form from other characters (the last eight)', (s: string) => `sk_${s.slice(-8, -4)}\u2026${s.slice(-4)}`],
    ['svc\'s form, the halves swapped', (s: string) => `sk_${s.slice(-4)}\u2026${s.slice(3, 7)}`],
  ])('prune --unused-for 7d --yes leaves it alone and names it (%s)', async (_, hint) => {
    const env = await start({ record: hinted(hint) });
    const other = spec.server.addKey('idle');
    aged(inUse(), other);
    const result = await svc(['keys', 'prune', '--unused-for', '7d', '--yes', '--json'], env);
    expect(spec.server.keys.has(inUse().id), result.stderr).toBe(true);
    expect(result.stderr).toContain(`Leaving ${inUse().id} alone`);
    expect(result.stderr).toContain('cannot tell whether it is the key in use');
    // Another key with a hint in a foreign form cannot be told apart either: it is left too.
    expect(spec.server.keys.has(other.id)).toBe(true);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout).changed).toEqual([]);
  });

  it('a hint in svc\'s own form that differs is "not in use": that key is pruned, the key in use is not', async () => {
    const env = await start({ record: hinted((s) => `sk_${s.slice(3, 7)}\u2026${s.slice(-4)}`) });
    const other = spec.server.addKey('idle');
    aged(inUse(), other);
    const result = await svc(['keys', 'prune', '--unused-for', '7d', '--yes'], env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(spec.server.keys.has(other.id)).toBe(false);
    expect(spec.server.keys.has(inUse().id)).toBe(true);
  });

  it.each([['--disabled'], ['--expired']])('prune %s acts on a server without hints: such a key cannot be the one that read the list', async (flag) => {
    const env = await start({ record: hinted(() => undefined) });
    const off = spec.server.addKey('off');
    off.enabled = false;
    const gone = spec.server.addKey('old', Date.now() + 60_000);
    gone.expiresAt = Date.now() - DAY;
    const result = await svc(['keys', 'prune', flag, '--yes'], env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(spec.server.keys.has((flag === '--disabled' ? off : gone).id)).toBe(false);
    expect(spec.server.keys.has((flag === '--disabled' ? gone : off).id)).toBe(true);
    expect(spec.server.keys.has(inUse().id)).toBe(true);
  });

  it.each([
    ['--disabled', { enabled: false, status: 'disabled' }],
    ['--expired', { status: 'expired', expiresAt: '2020-01-01T00:00:00.000Z' }],
  ])('prune %s leaves the key whose hint is the key in use, though the list says it is so', async (flag, lie) => {
    const env = await start({ record: (k, nowMs) => ({ ...records.full(k, nowMs), ...(k.secret === spec.server.apiKey ? lie : {}) }) });
    const result = await svc(['keys', 'prune', flag, '--yes'], env);
    expect(spec.server.keys.has(inUse().id), result.stderr).toBe(true);
    expect(result.stderr).toContain(`Leaving ${inUse().id} alone: it is the key svc is using.`);
  });

  it('revoke on a terminal warns, naming the key, when svc cannot tell', async () => {
    const env = await start({ record: hinted((s) => `sk_${s.slice(3, 7)}...${s.slice(-4)}`) });
    const prompter = scriptedPrompter([{ confirm: false }]);
    const result = await svc(['keys', 'revoke', inUse().id], env, { tty: true, deps: { prompter } });
    expect(result.stderr).toContain(`svc cannot tell whether ${inUse().id} is the key it is using`);
    expect(spec.server.keys.has(inUse().id)).toBe(true);
  });
});

describe('no key is picked for a command that was told not to ask', () => {
  it.each([
    ['rotate', ['keys', 'rotate', '--yes'], 'svc keys rotate <id>'],
    ['revoke', ['keys', 'revoke', '--yes'], 'svc keys revoke <id>…'],
  ])('keys %s --yes without an id, on a terminal, is a usage error and opens no pick-list', async (_, args, form) => {
    const env = await start();
    spec.server.addKey('a');
    const prompter = scriptedPrompter([]);
    const result = await svc(args, env, { tty: true, deps: { prompter } });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`Missing the key id: ${form}`);
    expect(prompter.asked).toEqual([]);
    expect(spec.server.seen.filter((r) => !r.startsWith('GET'))).toEqual([]);
  });

  it('keys rotate without --yes where nobody can be asked changes nothing, exit 2, as keys revoke', async () => {
    const env = await start();
    const old = spec.server.addKey('deploy');
    for (const extra of [[], ['--disable-old']]) {
      const result = await svc(['keys', 'rotate', old.id, ...extra], env);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain('Refusing to rotate without confirmation');
      expect(result.stderr).toContain('--yes');
    }
    expect(spec.server.seen.filter((r) => !r.startsWith('GET'))).toEqual([]);
    expect([...spec.server.keys.values()].map((k) => k.name).sort()).toEqual(['bootstrap', 'deploy']);
  });

  it('keys rotate --overlap leaves the old key working, so it needs no --yes', async () => {
    const env = await start();
    const old = spec.server.addKey('deploy');
    const result = await svc(['keys', 'rotate', old.id, '--overlap'], env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(spec.server.keys.get(old.id)?.enabled).toBe(true);
  });
});

describe('a name, against a list svc could not read whole', () => {
  it('names no key: revoke, disable and rotate by name change nothing and say why, exit 1', async () => {
    // Pages of 2 with a next_page_token svc does not know how to send back: keys may lie past the first page.
    const env = await start({ pages: { size: 2, style: 'token' } });
    spec.server.addKey('dup');
    spec.server.addKey('filler-1');
    spec.server.addKey('filler-2');
    spec.server.addKey('dup');
    for (const args of [
      ['keys', 'revoke', 'dup', '--yes'],
      ['keys', 'disable', 'dup'],
      ['keys', 'rotate', 'dup', '--yes'],
    ]) {
      const result = await svc(args, env);
      expect(result.exitCode, result.stderr).toBe(1);
      expect(result.stderr).toContain('could not read the whole key list');
      expect(result.stderr).toContain("'dup' may name a key it did not see");
    }
    expect(revokes().every((r) => !r.includes('/user/api-keys/') || r.endsWith('/dup'))).toBe(true);
    expect([...spec.server.keys.values()].filter((k) => k.name === 'dup')).toHaveLength(2);
    expect([...spec.server.keys.values()].every((k) => k.enabled)).toBe(true);
  });
});
