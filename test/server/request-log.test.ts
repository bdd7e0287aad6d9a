// tier: in-process
/**
 * The request log (`GET /_local/requests`) never holds key material, however
 * a script wrote a key into a path: any case, `sk-` for `sk_`, without its
 * prefix, percent-encoded once or more, or cut in pieces by `/`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactedPath } from '../../src/server/request-log.js';
import { startTestServer, type TestServer } from './helpers.js';

const encodeAll = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');

/** Paths that carry the key `secret` (its body `body`), each its own way. */
function craftedPaths(secret: string): string[] {
  const body = secret.slice(3);
  const [first, second] = [body.slice(0, 32), body.slice(32)];
  const thirds = [body.slice(0, 21), body.slice(21, 42), body.slice(42)];
  const keys = '/user/api-keys';
  return [
    `${keys}/${secret}`,
    `${keys}/${body}`,
    `${keys}/SK_${body}`,
    `${keys}/sk-${body}`,
    `${keys}/Sk_${body}`,
    `${keys}/${secret.toUpperCase()}`,
    `${keys}/sk%5F${body}`,
    `${keys}/sk%5f${body}`,
    `${keys}/${encodeAll('sk_')}${body}`,
    `${keys}/%2573k_${body}`,
    `${keys}/%252573k%255F${body}`,
    `${keys}/${encodeAll(secret)}`,
    `${keys}/${encodeAll(body)}`,
    `${keys}/sk_${first}/${second}`,
    `${keys}/sk_${first}%2F${second}`,
    `${keys}/sk_${first}%252F${second}`,
    `${keys}/${first}/${second}`,
    `${keys}/sk_${thirds.join('/')}`,
    `${keys}/${secret}/enable`,
    `${keys}/x-${secret}.json`,
    `${keys}/${body}%20`,
    `/${secret}`,
    `/workspace/${encodeAll(body.slice(0, 40))}${body.slice(40)}`,
  ];
}

/** Any 16 characters in a row of the key's body, in any case. */
function heldPieces(text: string, secret: string): string[] {
  const body = secret.slice(3).toLowerCase();
  const lower = text.toLowerCase();
  const pieces: string[] = [];
  for (let at = 0; at + 16 <= body.length; at++) if (lower.includes(body.slice(at, at + 16))) pieces.push(body.slice(at, at + 16));
  return pieces;
}

describe('the request log', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ plan: 'pro' });
  });
  afterAll(() => t.close());

  it('holds no 16 characters of a key that requests authenticated with it put in their paths', async () => {
    const other = (await t.api('POST', '/user/api-keys', { body: { name: 'pasted' } })).json.secret as string;
    const paths = [...craftedPaths(t.apiKey), ...craftedPaths(other)];
    for (const path of paths) {
      const answer = await t.api('GET', path);
      expect(answer.status, path).not.toBe(401);
      await t.api('DELETE', path);
    }
    const log = await t.admin('GET', `/requests?limit=${paths.length * 2}`);
    const logged = log.json.requests as { path: string; keyHint: string | null }[];
    expect(logged).toHaveLength(paths.length * 2);
    expect(logged.every((entry) => entry.keyHint !== null)).toBe(true);
    expect(heldPieces(log.text, t.apiKey)).toEqual([]);
    expect(heldPieces(log.text, other)).toEqual([]);
    expect(logged.every((entry) => entry.path.includes('sk_[redacted]'))).toBe(true);
  });

  it('keeps paths that hold no key as they came', () => {
    for (const path of [
      '/api/service/user/api-keys',
      '/api/service/user/api-keys/key_0fnfu8idtdapl2nb1ruh',
      '/api/service/workspace',
      '/api/service/user/api-keys/task-manager-2024',
      '/api/service/user/api-keys/key%5F0fnfu8idtdapl2nb1ruh',
      '/api/service/generations/3f2a9c1e-77b4-4d0e-9a51-0c6e2b8d4f10',
      '/nowhere/%E2%80%AE',
    ]) {
      expect(redactedPath(path)).toBe(path);
    }
  });

  it('replaces only the segments a key runs through', () => {
    expect(redactedPath(`/api/service/user/api-keys/sk_${'a1'.repeat(32)}`)).toBe('/api/service/user/api-keys/sk_[redacted]');
    expect(redactedPath(`/api/service/user/api-keys/${'B2'.repeat(32)}/enable`)).toBe('/api/service/user/api-keys/sk_[redacted]/sk_[redacted]');
    expect(redactedPath(`/x/sk-${'c'.repeat(64)}/-/y`)).toBe('/x/sk_[redacted]/-/y');
  });
});
