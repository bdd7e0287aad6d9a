import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { normalisePath, typedValue } from '../../src/cli/commands/api.js';
import { replacementExpiry } from '../../src/cli/commands/keys/rotate.js';
import { checkKeyId } from '../../src/cli/commands/keys/common.js';
import { UsageError } from '../../src/cli/errors.js';
import { integerAtLeast } from '../../src/cli/program.js';
import type { KeyRecord } from '../../src/contract/types.js';

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
  it('are [a-z0-9_] only', () => {
    expect(checkKeyId('key_0123abcd')).toBe('key_0123abcd');
    for (const bad of ['', 'KEY_1', 'key-1', 'key 1', '../x']) expect(() => checkKeyId(bad), bad).toThrow(UsageError);
  });
});

describe('replacementExpiry', () => {
  const now = Date.parse('2026-11-21T10:00:00.000Z');
  const key = (createdAt: string, expiresAt: string | null): KeyRecord => ({
    id: 'key_1',
    name: 'ci',
    hint: 'sk_abcd…wxyz',
    enabled: true,
    status: 'enabled',
    workspaceId: 'ws_1',
    createdAt,
    expiresAt,
    lastUsedAt: null,
  });

  it('never expires when the old key never did', () => {
    expect(replacementExpiry(key('2026-11-01T00:00:00.000Z', null), now)).toBeNull();
  });

  it('keeps the old expiry while it is still ahead', () => {
    expect(replacementExpiry(key('2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z'), now)).toBe('2026-12-01T00:00:00.000Z');
  });

  it('gives an expired key its original lifetime again, from now', () => {
    expect(replacementExpiry(key('2026-11-01T00:00:00.000Z', '2026-11-11T00:00:00.000Z'), now)).toBe('2026-12-01T10:00:00.000Z');
  });
});
