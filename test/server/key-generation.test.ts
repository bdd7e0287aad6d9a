// tier: in-process
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BASE62, isWellFormedKey, keyHint } from '../../src/contract/key-format.js';
import { generateKey, randomString } from '../../src/contract/key-generation.js';
import { Clock } from '../../src/server/clock.js';
import { Store } from '../../src/server/store.js';

describe('generateKey', () => {
  it('is sk_ and 64 base62 characters', () => {
    for (let i = 0; i < 200; i++) {
      const key = generateKey();
      expect(key).toMatch(/^sk_[A-Za-z0-9]{64}$/);
      expect(isWellFormedKey(key)).toBe(true);
    }
  });

  it('skips bytes of 248 and above instead of folding them onto the first symbols', () => {
    // Every other byte is in the biased range; only the others may become symbols.
    const random = (size: number) => Buffer.from(Array.from({ length: size }, (_, i) => (i % 2 ? 248 + (i % 8) : 61)));
    expect(generateKey(random)).toBe(`sk_${'z'.repeat(64)}`);
  });

  it('keeps drawing until it has 64 symbols, however many bytes are skipped', () => {
    let calls = 0;
    const random = (size: number) => {
      calls++;
      return Buffer.alloc(size, calls < 5 ? 255 : 0);
    };
    expect(generateKey(random)).toBe(`sk_${'0'.repeat(64)}`);
    expect(calls).toBe(5);
  });

  it('maps byte b below 248 to symbol b mod 62', () => {
    const bytes = Array.from({ length: 64 }, (_, i) => (i * 7) % 248);
    const key = generateKey((size) => Buffer.from(bytes.slice(0, size)));
    expect(key.slice(3)).toBe(bytes.map((b) => BASE62[b % 62]).join(''));
  });

  it('uses every symbol about equally often (chi-square over 2,000 keys)', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 2000; i++) for (const c of generateKey().slice(3)) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    const expected = (2000 * 64) / 62;
    const chi = [...counts.values()].reduce((sum, n) => sum + (n - expected) ** 2 / expected, 0);
    // 61 degrees of freedom: p = 0.0001 at about 112. A modulo bias would give well over 1,000.
    expect(chi).toBeLessThan(112);
  });

  it('hints with the first and last four characters of the body', () => {
    expect(keyHint(`sk_abcd${'x'.repeat(56)}wxyz`)).toBe('sk_abcd\u2026wxyz');
  });
});

describe('randomString', () => {
  it('drops bytes of 252 and above for base36', () => {
    const random = (size: number) => Buffer.from(Array.from({ length: size }, (_, i) => (i % 2 ? 252 : 35)));
    expect(randomString('0123456789abcdefghijklmnopqrstuvwxyz', 10, random)).toBe('z'.repeat(10));
  });
});

describe('store ids', () => {
  it('are key_ plus lowercase base36, distinct, and never collide with a live id', () => {
    const store = new Store(new Clock());
    const { user } = store.createUser('u', 'free');
    const ids = new Set<string>();
    for (let i = 0; i < 500; i++) {
      const { key } = store.createKey(user, 'k', null);
      expect(key.id).toMatch(/^key_[a-z0-9]{20}$/);
      ids.add(key.id);
    }
    expect(ids.size).toBe(500);
  });

  it('draws again when a random id is already taken', () => {
    // usr id, ws id, then the second usr id collides with the first and is drawn again.
    const script = [1, 1, 1, 2];
    let i = 0;
    const random = (size: number) => (size === 20 ? Buffer.alloc(20, script[i++] ?? 3) : randomBytes(size));
    const store = new Store(new Clock(), random);
    const first = store.createUser('u', 'free');
    const second = store.createUser('v', 'free');
    expect(first.user.id).toBe(`usr_${'1'.repeat(20)}`);
    expect(second.user.id).toBe(`usr_${'2'.repeat(20)}`);
  });
});
