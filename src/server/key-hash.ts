import { hash } from 'node:crypto';

/**
 * SHA-256 of the whole key, the only form in which a key is ever kept.
 * crypto.hash, not createHash: a one-shot digest makes no Hash object, and
 * on every authenticated request that object cost several times the digest.
 */
export function hashKey(key: string): Buffer {
  return hash('sha256', key, 'buffer');
}

/**
 * The digest in hex, the form the store finds keys by. Hashed on every
 * request, with no cache of keys already verified: such a cache would be
 * keyed by the secret itself, which the server must never hold (docs/contract.md
 * §A2), and the store's map from digest to key already is that cache.
 */
export function hashKeyHex(key: string): string {
  return hash('sha256', key, 'hex');
}
