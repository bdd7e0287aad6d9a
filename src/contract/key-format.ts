import { randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'sk_';
export const KEY_BODY_LENGTH = 64;
export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[A-Za-z0-9]{${KEY_BODY_LENGTH}}$`);

export function isWellFormedKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

/**
 * `length` symbols of `alphabet` drawn from `random` bytes without modulo
 * bias: when the alphabet size does not divide 256, a byte taken modulo the
 * size would favour the first symbols, so bytes at or above the largest
 * multiple of the size (248 for base62, 252 for base36) are thrown away.
 */
export function randomString(
  alphabet: string,
  length: number,
  random: (size: number) => Buffer = randomBytes,
): string {
  const unbiasedLimit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < length) {
    for (const byte of random(length)) {
      if (byte >= unbiasedLimit) continue;
      out += alphabet[byte % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}

export function generateKey(random: (size: number) => Buffer = randomBytes): string {
  return KEY_PREFIX + randomString(BASE62, KEY_BODY_LENGTH, random);
}

/** `sk_` + first 4 + `…` + last 4 of the body: enough to recognise, not to guess. */
export function keyHint(key: string): string {
  const body = key.startsWith(KEY_PREFIX) ? key.slice(KEY_PREFIX.length) : key;
  return `${KEY_PREFIX}${body.slice(0, 4)}\u2026${body.slice(-4)}`;
}
