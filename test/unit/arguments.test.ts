// tier: in-process
import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { normalisePath, typedValue } from '../../src/cli/commands/api.js';
import { checkKeyId, replacementExpiry } from '../../src/cli/domain/keys.js';
import { UsageError } from '../../src/cli/errors/errors.js';
import { integerAtLeast } from '../../src/cli/program/program.js';
import { readKey } from '../../src/client/key-view.js';
import { DrawnMarks } from '../../src/client/marks.js';
import { apiPaths } from '../../src/contract/paths.js';

describe('integerAtLeast', () => {
  it('accepts whole numbers at or above the floor', () => {
    expect(integerAtLeast(1)('250')).toBe(250);
    expect(integerAtLeast(0)('0')).toBe(0);
  });

  it('rejects units, signs, fractions, exponents and values below the floor', () => {
    for (const bad of ['10ms', '-1', '1.5', '1e3', '', ' ', '0x10', '99999999999999999999']) {
      expect(() => integerAtLeast(0)(bad), bad).toThrow(InvalidArgumentError);
    }
    expect(() => integerAtLeast(1)('0')).toThrow(InvalidArgumentError);
  });
});

describe('svc api arguments', () => {
  it('takes paths with or without the leading slash and the /api/service prefix', () => {
    expect(normalisePath('workspace')).toBe('/workspace');
    expect(normalisePath('/user/api-keys')).toBe('/user/api-keys');
    expect(normalisePath('/api/service/user/api-keys/key_1')).toBe('/user/api-keys/key_1');
    expect(() => normalisePath('https://elsewhere.test/x')).toThrow(UsageError);
  });

  it('types -F values like JSON literals, and leaves other text as strings', async () => {
    expect(await typedValue('true')).toBe(true);
    expect(await typedValue('false')).toBe(false);
    expect(await typedValue('null')).toBe(null);
    expect(await typedValue('42')).toBe(42);
    expect(await typedValue('-1.5e2')).toBe(-150);
    expect(await typedValue('030d')).toBe('030d');
    expect(await typedValue('nightly')).toBe('nightly');
  });
});

describe('key ids', () => {
  it('are opaque: any shape another server may use is sent, only what no path segment can carry is refused', () => {
    for (const id of ['key_0123abcd', 'KEY_1', '3f2c9a4e-8b1d-4c6e-9f00-1a2b3c4d5e6f', '42', 'a b', '../x', '...']) {
      expect(checkKeyId(id)).toBe(id);
    }
    for (const bad of ['', '  ', '.', '..']) expect(() => checkKeyId(bad), JSON.stringify(bad)).toThrow(UsageError);
  });

  it('are encoded as one path segment', () => {
    for (const id of ['a/b?c#d', '../x', 'v1.2', 'ключ']) {
      const url = new URL(`http://h/api/service${apiPaths.key(id)}`);
      expect(url.pathname.split('/').slice(5).map(decodeURIComponent)).toEqual([id]);
    }
  });
});

describe('replacementExpiry', () => {
  const drawn = new DrawnMarks();
  const expiry = (old: ReturnType<typeof readKey>, nowMs: number) => replacementExpiry(old, nowMs, (atMs) => drawn.expiry(atMs, nowMs));
  const now = Date.parse('2026-11-21T10:00:00.000Z');
  const key = (record: Record<string, unknown>) => readKey({ id: 'key_1', name: 'ci', ...record });

  it('never expires when the old key never did', () => {
    expect(expiry(key({ createdAt: '2026-11-01T00:00:00.000Z', expiresAt: null }), now)).toEqual({ expiresAt: null, unknown: false });
  });

  it('keeps the old expiry while it is still ahead, whatever its spelling', () => {
    const ahead = { expiresAt: '2026-12-01T00:00:00.000Z', unknown: false };
    expect(expiry(key({ expiresAt: '2026-12-01T00:00:00.000Z' }), now)).toEqual(ahead);
    expect(expiry(key({ expires_at: Date.parse('2026-12-01T00:00:00.000Z') / 1000 }), now)).toEqual(ahead);
  });

  it('gives an expired key its original lifetime again, from now, less a random part of a hundredth of it (svc\'s mark)', () => {
    const record = { created_at: '2026-11-01T00:00:00.000Z', expiresAt: '2026-11-11T00:00:00.000Z' };
    const { expiresAt, unknown } = expiry(key(record), now);
    expect(unknown).toBe(false);
    const asked = Date.parse('2026-12-01T10:00:00.000Z');
    expect(asked - Date.parse(expiresAt!)).toBeGreaterThanOrEqual(0);
    // Ten days' hundredth is past the half minute a mark is pulled back by at most.
    expect(asked - Date.parse(expiresAt!)).toBeLessThan(30_000);
    expect(Date.parse(expiresAt!) % 1000).not.toBe(0);
    expect(drawn.take({ name: 'ci', expiresAt: expiresAt! }).expiresAtMs).toBe(Date.parse(expiresAt!));
    expect(drawn.take({ name: 'ci', expiresAt: expiresAt! }).expiresAtMs, 'a mark is one create\'s').toBeNull();
  });

  it('says so when the record does not tell', () => {
    expect(expiry(key({}), now)).toEqual({ expiresAt: null, unknown: true });
    expect(expiry(key({ expiresAt: 'soon' }), now)).toEqual({ expiresAt: null, unknown: true });
    expect(expiry(key({ expiresAt: '2026-11-11T00:00:00.000Z' }), now)).toEqual({ expiresAt: null, unknown: true });
  });
});
