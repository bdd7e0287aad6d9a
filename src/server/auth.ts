import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isWellFormedKey } from '../contract/key-format.js';
import { hashKey, hashKeyHex } from './key-hash.js';
import type { Store, StoredKey } from './store.js';

/** Scheme matched case-insensitively, then one or more spaces, then the credential. */
const BEARER = /^bearer +(\S+)$/i;

/**
 * The credential of a single `Authorization: Bearer` header, or null. Two
 * Authorization headers are refused rather than picking one: a proxy and
 * the server could otherwise disagree about who is calling.
 */
export function bearerCredential(req: IncomingMessage): string | null {
  // The raw list, not headersDistinct: that builds an array for every header of every request to find this one.
  const raw = req.rawHeaders;
  let value: string | null = null;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length !== AUTHORIZATION.length || name.toLowerCase() !== AUTHORIZATION) continue;
    if (value !== null) return null;
    value = raw[i + 1]!;
  }
  return value === null ? null : parseBearer(value);
}

const AUTHORIZATION = 'authorization';

export function parseBearer(header: string): string | null {
  const match = BEARER.exec(header.trim());
  return match ? match[1]! : null;
}

/**
 * What an unknown key is compared against, so that a miss does the same
 * work as a disabled or expired key: the hex decode, the constant-time
 * compare and the expiry check. Its hash is no SHA-256 of anything.
 */
const NO_KEY = { hash: '0'.repeat(64), enabled: false, expiresAt: 0 } as StoredKey;

/**
 * The key a request authenticates with, or null for every kind of failure
 * alike (docs/contract.md §A2): an unknown, a disabled and an expired key take one
 * path, so the time of a 401 does not tell a holder of a dead key which
 * kind of dead it is. A successful use is recorded as lastUsedAt.
 */
export function authenticateKey(store: Store, req: IncomingMessage): StoredKey | null {
  const credential = bearerCredential(req);
  if (credential === null || !isWellFormedKey(credential)) return null;
  const digest = hashKeyHex(credential);
  const found = store.keyByHash(digest);
  const key = found ?? NO_KEY;
  // The map lookup already matched; the constant-time compare is the final word, as the contract asks.
  const matches = timingSafeEqual(Buffer.from(key.hash, 'hex'), Buffer.from(digest, 'hex'));
  const usable = key.enabled && !store.isExpired(key);
  if (found === undefined || !matches || !usable) return null;
  store.recordUse(found);
  return found;
}

/**
 * Compares digests rather than the tokens themselves, so the comparison
 * takes the same time whatever the length of the guess.
 */
export function isAdminToken(req: IncomingMessage, adminToken: string): boolean {
  const credential = bearerCredential(req);
  if (credential === null) return false;
  return timingSafeEqual(hashKey(credential), hashKey(adminToken));
}
