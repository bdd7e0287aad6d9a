// tier: in-process
import { describe, expect, it } from 'vitest';
import { HttpError } from '../../src/server/http.js';
import { parseRfc3339, validCreateKey, validName, validPatchKey } from '../../src/server/validation.js';

const NOW = Date.parse('2030-06-15T12:00:00.000Z');

function rejection(fn: () => unknown): HttpError {
  try {
    fn();
  } catch (error) {
    if (error instanceof HttpError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('validName', () => {
  it('trims and counts code points, not UTF-16 units', () => {
    expect(validName('  deploy bot  ', 'name')).toBe('deploy bot');
    expect(validName('😀'.repeat(100), 'name')).toBe('😀'.repeat(100));
    expect(validName('é'.repeat(100), 'name')).toHaveLength(100);
  });

  it.each([
    ['', 'empty'],
    ['   ', 'blank'],
    ['x'.repeat(101), '101 characters'],
    ['😀'.repeat(101), '101 emoji'],
    ['a\nb', 'a newline'],
    ['a\u0000b', 'NUL'],
    ['a\u007fb', 'DEL'],
    ['a\u0085b', 'a C1 control'],
    ['a\ud800b', 'a lone surrogate'],
  ])('refuses %j (%s)', (name) => {
    expect(rejection(() => validName(name, 'name'))).toMatchObject({ status: 400, code: 'INVALID_REQUEST' });
  });

  it.each([[42], [null], [true], [['x']], [{}]])('refuses the non-string %j', (value) => {
    expect(rejection(() => validName(value, 'name')).message).toContain('"name" must be a string');
  });
});

describe('parseRfc3339', () => {
  it.each([
    ['2030-01-31T12:00:00Z', '2030-01-31T12:00:00.000Z'],
    ['2030-01-31t12:00:00z', '2030-01-31T12:00:00.000Z'],
    ['2030-01-31T12:00:00.5Z', '2030-01-31T12:00:00.500Z'],
    ['2030-01-31T12:00:00.123456789Z', '2030-01-31T12:00:00.123Z'],
    ['2030-01-31T12:00:00+02:00', '2030-01-31T10:00:00.000Z'],
    ['2030-01-31T00:30:00-05:30', '2030-01-31T06:00:00.000Z'],
    ['2028-02-29T00:00:00Z', '2028-02-29T00:00:00.000Z'],
    ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['0050-01-01T00:00:00Z', '0050-01-01T00:00:00.000Z'],
  ])('reads %j', (text, iso) => {
    expect(new Date(parseRfc3339(text)!).toISOString()).toBe(iso);
  });

  it.each([
    '2030-01-31',
    '2030-01-31T12:00:00',
    '2030-01-31 12:00:00Z',
    '2030-01-31T12:00Z',
    '2030-1-31T12:00:00Z',
    '2030-13-01T00:00:00Z',
    '2030-00-01T00:00:00Z',
    '2030-02-29T00:00:00Z',
    '2100-02-29T00:00:00Z',
    '2030-04-31T00:00:00Z',
    '2030-01-31T24:00:00Z',
    '2030-01-31T23:60:00Z',
    '2030-01-31T23:59:60Z',
    '2030-01-31T12:00:00+24:00',
    '2030-01-31T12:00:00+0200',
    '2030-01-31T12:00:00.Z',
    '2030-01-31T12:00:00Z ',
    '1893456000',
    'tomorrow',
  ])('refuses %j', (text) => {
    expect(parseRfc3339(text)).toBeNull();
  });
});

describe('validCreateKey', () => {
  it('takes a name, and an optional future expiry or null', () => {
    expect(validCreateKey({ name: ' ci ' }, NOW)).toEqual({ name: 'ci', expiresAt: null });
    expect(validCreateKey({ name: 'ci', expiresAt: null }, NOW)).toEqual({ name: 'ci', expiresAt: null });
    expect(validCreateKey({ name: 'ci', expiresAt: '2030-06-15T12:00:00.001Z' }, NOW)).toEqual({
      name: 'ci',
      expiresAt: NOW + 1,
    });
  });

  it.each([
    [{}, '"name" is required'],
    [{ expiresAt: null }, '"name" is required'],
    [{ name: 'ci', extra: 1 }, 'unknown field "extra"'],
    [{ name: 'ci', secret: 'sk_x' }, 'unknown field "secret"'],
    [{ name: 'ci', expiresAt: '2030-06-15T12:00:00.000Z' }, 'in the future'],
    [{ name: 'ci', expiresAt: '2030-06-15T13:00:00+02:00' }, 'in the future'],
    [{ name: 'ci', expiresAt: '2001-01-01T00:00:00Z' }, 'in the future'],
    [{ name: 'ci', expiresAt: 1_900_000_000_000 }, 'RFC 3339'],
    [{ name: 'ci', expiresAt: '2031-01-01' }, 'RFC 3339'],
    [{ name: 'ci', expiresAt: '' }, 'RFC 3339'],
  ])('refuses %j', (body, message) => {
    const error = rejection(() => validCreateKey(body, NOW));
    expect(error).toMatchObject({ status: 400, code: 'INVALID_REQUEST' });
    expect(error.message).toContain(message);
  });
});

describe('validPatchKey', () => {
  it('takes exactly {enabled: boolean}', () => {
    expect(validPatchKey({ enabled: false })).toBe(false);
    expect(validPatchKey({ enabled: true })).toBe(true);
  });

  it.each([[{}], [{ enabled: 'true' }], [{ enabled: 1 }], [{ enabled: null }], [{ enabled: true, name: 'x' }]])(
    'refuses %j',
    (body) => {
      expect(rejection(() => validPatchKey(body))).toMatchObject({ status: 400, code: 'INVALID_REQUEST' });
    },
  );
});
