// tier: in-process
import { describe, expect, it } from 'vitest';
import { findSecret, readKey, readKeyList, readTime } from '../../src/client/key-view.js';

const secret = `sk_${'a1B2'.repeat(16)}`;
const other = `sk_${'Z9'.repeat(32)}`;

describe('findSecret (docs/contract.md §C6)', () => {
  it.each([
    ['the secret field', { id: 'k', secret }],
    ['the secret field, whatever its shape', { secret: 'opaque-token', key: other }],
    ['one key-shaped string at the top level', { id: 'k', key: secret }],
    ['one key-shaped string one object down', { data: { id: 'k', api_key: secret } }],
    ['the same string twice', { key: secret, data: { value: secret } }],
  ])('finds %s', (_, doc) => {
    expect(findSecret(doc)).toBe((doc as { secret?: string }).secret ?? secret);
  });

  it.each([
    ['two objects down', { result: { key: { value: secret } } }],
    ['two different candidates', { key: secret, old: other }],
    ['no key-shaped string', { token: 'live-abc' }],
    ['a key-shaped string in an array', { keys: [secret] }],
    ['an empty secret field', { secret: '' }],
    ['not an object', [secret]],
    ['nothing', null],
  ])('finds nothing when %s', (_, doc) => {
    expect(findSecret(doc)).toBeNull();
  });
});

describe('readTime', () => {
  it('reads RFC 3339, epoch seconds and epoch milliseconds alike', () => {
    const ms = Date.UTC(2026, 10, 22, 12, 0, 0);
    expect(readTime('2026-11-22T12:00:00.000Z')).toBe(ms);
    expect(readTime('2026-11-22T13:00:00+01:00')).toBe(ms);
    expect(readTime(ms / 1000)).toBe(ms);
    expect(readTime(ms)).toBe(ms);
    expect(readTime(String(ms / 1000))).toBe(ms);
  });

  it.each([undefined, null, '', 'soon', true, {}, Number.NaN, 1e300])('is null for %s', (value) => {
    expect(readTime(value)).toBeNull();
  });
});

describe('readKey', () => {
  it('reads snake_case spellings and numeric ids', () => {
    const view = readKey({ id: 42, name: 'ci', workspace_id: 'w1', created_at: 1_700_000_000, expires_at: null });
    expect(view).toMatchObject({ id: '42', name: 'ci', workspaceId: 'w1', createdAt: 1_700_000_000_000, expiresAt: null, expiresKnown: true });
  });

  it('reads the other words services use: label, active, created, expires, last_used', () => {
    const key = readKey({ key_id: 'k9', label: 'deploy', active: false, state: 'revoked', created: '2026-01-02T03:04:05Z', expires: null, last_used: 1_767_225_600 });
    expect(key).toMatchObject({ id: 'k9', name: 'deploy', enabled: false, status: 'revoked', createdAt: Date.parse('2026-01-02T03:04:05Z'), expiresAt: null, expiresKnown: true, lastUsedAt: 1_767_225_600_000 });
    for (const field of ['creation_time', 'creationTime', 'createTime', 'inserted_at', 'issued_at']) {
      expect(readKey({ [field]: '2026-01-02T03:04:05Z' }).createdAt, field).toBe(Date.parse('2026-01-02T03:04:05Z'));
    }
    // Our own spelling wins where a record has both.
    expect(readKey({ name: 'ours', label: 'theirs' }).name).toBe('ours');
  });

  it('leaves what is missing or odd as null, and says when expiry is not known', () => {
    expect(readKey({ name: ['x'], expiresAt: 'never' })).toMatchObject({
      id: null,
      name: null,
      workspaceId: null,
      createdAt: null,
      expiresAt: null,
      expiresKnown: false,
    });
    expect(readKey('not a record').expiresKnown).toBe(false);
  });

  it('reads a list answer, and anything else as an empty list', () => {
    expect(readKeyList({ keys: [{ id: 'a' }, 7] }).map((k) => k.id)).toEqual(['a', null]);
    expect(readKeyList({ items: [] })).toEqual([]);
    expect(readKeyList(null)).toEqual([]);
  });
});
