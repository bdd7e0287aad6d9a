// tier: in-process
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { authenticateKey, bearerCredential, isAdminToken, parseBearer } from '../../src/server/auth.js';
import { Clock } from '../../src/server/clock.js';
import { Store } from '../../src/server/store.js';

const KEY = `sk_${'A1b2'.repeat(16)}`;

/** Only the part of a request that auth reads. */
function requestWith(...authorization: string[]): IncomingMessage {
  return { rawHeaders: ['Host', 'example.test', ...authorization.flatMap((value, i) => [i % 2 ? 'AUTHORIZATION' : 'Authorization', value])] } as unknown as IncomingMessage;
}

describe('parseBearer', () => {
  it.each([
    [`Bearer ${KEY}`, KEY],
    [`bearer ${KEY}`, KEY],
    [`BEARER ${KEY}`, KEY],
    [`BeArEr ${KEY}`, KEY],
    [`Bearer    ${KEY}`, KEY],
    [`  Bearer ${KEY}  `, KEY],
  ])('accepts %j', (header, credential) => {
    expect(parseBearer(header)).toBe(credential);
  });

  it.each([
    ['', 'empty'],
    ['Bearer', 'scheme only'],
    ['Bearer ', 'scheme and a space'],
    [KEY, 'no scheme'],
    [`Basic ${KEY}`, 'another scheme'],
    [`Bearer\t${KEY}`, 'a tab instead of spaces'],
    [`Bearer${KEY}`, 'no space'],
    [`Bearer ${KEY} extra`, 'two credentials'],
    [`Token ${KEY}`, 'a made-up scheme'],
  ])('refuses %j (%s)', (header) => {
    expect(parseBearer(header)).toBeNull();
  });
});

describe('bearerCredential', () => {
  it('reads one Authorization header and refuses none or two', () => {
    expect(bearerCredential(requestWith(`Bearer ${KEY}`))).toBe(KEY);
    expect(bearerCredential(requestWith())).toBeNull();
    expect(bearerCredential(requestWith(`Bearer ${KEY}`, `Bearer ${KEY}`))).toBeNull();
  });
});

describe('authenticateKey', () => {
  function setup() {
    const clock = new Clock();
    const store = new Store(clock);
    const { user } = store.createUser('u', 'free');
    return { clock, store, user };
  }

  it('finds the key by hash and records its use', () => {
    const { store, user } = setup();
    const { key, secret } = store.createKey(user, 'k', null);
    expect(key.lastUsedAt).toBeNull();
    expect(authenticateKey(store, requestWith(`Bearer ${secret}`))).toBe(key);
    expect(key.lastUsedAt).not.toBeNull();
  });

  it('refuses malformed, unknown, disabled and expired keys alike', () => {
    const { clock, store, user } = setup();
    const { secret } = store.createKey(user, 'k', null);
    expect(authenticateKey(store, requestWith(`Bearer ${secret.slice(0, -1)}`))).toBeNull();
    expect(authenticateKey(store, requestWith(`Bearer ${KEY}`))).toBeNull();

    const disabled = store.createKey(user, 'd', null);
    store.setEnabled(disabled.key, false);
    expect(authenticateKey(store, requestWith(`Bearer ${disabled.secret}`))).toBeNull();
    expect(disabled.key.lastUsedAt).toBeNull();

    const expiring = store.createKey(user, 'e', clock.now() + 10_000);
    expect(authenticateKey(store, requestWith(`Bearer ${expiring.secret}`))).toBe(expiring.key);
    clock.advance(10);
    expect(authenticateKey(store, requestWith(`Bearer ${expiring.secret}`))).toBeNull();
  });

  it('stores only the hash: the secret appears nowhere in the saved state', () => {
    const { store, user } = setup();
    const { secret } = store.createKey(user, 'k', null);
    expect(JSON.stringify(store.toSnapshot())).not.toContain(secret.slice(3));
  });
});

describe('isAdminToken', () => {
  it('matches the exact token only', () => {
    expect(isAdminToken(requestWith('Bearer s3cret'), 's3cret')).toBe(true);
    expect(isAdminToken(requestWith('bearer  s3cret'), 's3cret')).toBe(true);
    expect(isAdminToken(requestWith('Bearer s3cre'), 's3cret')).toBe(false);
    expect(isAdminToken(requestWith('Bearer s3cretX'), 's3cret')).toBe(false);
    expect(isAdminToken(requestWith(), 's3cret')).toBe(false);
  });
});
