import { randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'sk_';
export const KEY_BODY_LENGTH = 64;
export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[A-Za-z0-9]{${KEY_BODY_LENGTH}}$`);

export function isWellFormedKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

/**
 * 62 does not divide 256, so a byte taken modulo 62 would favour the first
 * eight symbols. Bytes of 248 and above (62 * 4) are thrown away instead.
 */
const UNBIASED_LIMIT = 256 - (256 % BASE62.length);

export function generateKey(random: (size: number) => Buffer = randomBytes): string {
  let body = '';
  while (body.length < KEY_BODY_LENGTH) {
    for (const byte of random(KEY_BODY_LENGTH)) {
      if (byte >= UNBIASED_LIMIT) continue;
      body += BASE62[byte % BASE62.length];
      if (body.length === KEY_BODY_LENGTH) break;
    }
  }
  return KEY_PREFIX + body;
}

/** `sk_` + first 4 + `…` + last 4 of the body: enough to recognise, not to guess. */
export function keyHint(key: string): string {
  const body = key.startsWith(KEY_PREFIX) ? key.slice(KEY_PREFIX.length) : key;
  return `${KEY_PREFIX}${body.slice(0, 4)}\u2026${body.slice(-4)}`;
}
