export const KEY_PREFIX = 'sk_';
export const KEY_BODY_LENGTH = 64;
export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[A-Za-z0-9]{${KEY_BODY_LENGTH}}$`);

export function isWellFormedKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

/** `sk_` + first 4 + `…` + last 4 of the body: enough to recognise, not to guess. */
export function keyHint(key: string): string {
  const body = key.startsWith(KEY_PREFIX) ? key.slice(KEY_PREFIX.length) : key;
  return `${KEY_PREFIX}${body.slice(0, 4)}\u2026${body.slice(-4)}`;
}
