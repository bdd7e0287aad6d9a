import { createHash } from 'node:crypto';

/** SHA-256 of the whole key, the only form in which a key is ever kept. */
export function hashKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}
