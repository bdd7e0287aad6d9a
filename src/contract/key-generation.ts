import { randomBytes } from 'node:crypto';
import { BASE62, KEY_BODY_LENGTH, KEY_PREFIX } from './key-format.js';

// Apart from key-format.ts so the CLI, which only checks and shows keys,
// never loads node:crypto at start-up.

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
