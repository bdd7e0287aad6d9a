// tier: in-process
/**
 * docs/contract.md §C3 and §C5: under --json every failure leaves exactly
 * one JSON document on stdout. When the command printed nothing there, it
 * is the failure's own (docs/cli-error.schema.json), made by the one
 * failure report from the same error as the message on stderr; when the
 * command printed its document first, that one stays the only one.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { Deps } from '../../src/cli/terminal/deps.js';
import { useFaultyServer } from '../helpers/reference-faults.js';
import { call, svc, windowEndsIn, type RunResult } from '../helpers/in-process.js';
import { records, startSpecServer } from '../helpers/spec-server.js';

const server = useFaultyServer();

/** svc's clock, where a test reads a time svc computes from it. */
const NOW = Date.parse('2026-01-01T00:00:00.000Z');

const validate = new Ajv2020({ strict: true }).compile(JSON.parse(readFileSync(resolve(import.meta.dirname, '../../docs/cli-error.schema.json'), 'utf8')));

interface Failure {
  message: string;
  exitCode: number;
  status?: number;
  code?: string;
  details?: string[];
  body?: unknown;
  retryAfter?: number;
  retryAt?: string;
  answer?: string;
  orphans?: { id: string; name: string; createdAt: string; revoked: boolean }[];
  candidates?: { id: string; name: string; createdAt: string | null }[];
}

/** The one document on stdout, checked against the schema and against the exit code and stderr of the same run. */
function failureOf(result: RunResult): Failure {
  const document: unknown = JSON.parse(result.stdout);
  expect(validate(document), JSON.stringify(validate.errors)).toBe(true);
  const { error } = document as { error: Failure };
  expect(error.exitCode).toBe(result.exitCode);
  return error;
}

/** Signals as they come: each as soon as svc listens for them (the create's request is then out, held by a delay fault). */
function signals(...sent: NodeJS.Signals[]): Pick<Deps, 'onSignal'> {
  return {
    onSignal(_signals, listener) {
      let live = true;
      for (const signal of sent) setImmediate(() => live && listener(signal));
      return () => {
        live = false;
      };
    },
  };
}

describe('--json failures: one document on stdout, per exit code', () => {
  it('0: the command\'s own document, no error', async () => {
    const result = await svc(['keys', 'list', '--json'], server.env);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).not.toHaveProperty('error');
  });

  it('1: a server error carries its status and code; stderr says the same', async () => {
    await server.fault({ status: 500, times: 0 });
    const result = await svc(['keys', 'list', '--json', '--max-wait', '0'], server.env);
    expect(result.exitCode).toBe(1);
    const error = failureOf(result);
    expect(error).toMatchObject({ status: 500, code: 'INTERNAL' });
    expect(result.stderr).toContain(error.message.split('\n')[0]);
  });

  it('1: the network, with no status', async () => {
    const result = await svc(['keys', 'list', '--json', '--max-wait', '0'], { ...server.env, SVC_BASE_URL: 'http://127.0.0.1:9' });
    expect(result.exitCode).toBe(1);
    const error = failureOf(result);
    expect(error).not.toHaveProperty('status');
    expect(error.message).toContain('Could not get an answer from http://127.0.0.1:9');
  });

  it('2: a usage error of svc\'s own', async () => {
    const error = failureOf(await svc(['keys', 'prune', '--json'], server.env));
    expect(error).toMatchObject({ exitCode: 2, message: expect.stringContaining('Say which keys to prune') });
  });

  it.each([
    ['an unknown option', ['keys', 'list', '--json', '--no-such-flag'], "unknown option '--no-such-flag'"],
    ['an option without its value', ['--json', 'keys', 'list', '--name'], "option '--name <text>' argument missing"],
    ['an unknown command', ['keys', 'lits', '--json'], 'lits'],
  ])('2: commander\'s usage error, %s, with its message on stderr as well', async (_, args, said) => {
    const result = await svc(args, server.env);
    expect(result.exitCode).toBe(2);
    expect(failureOf(result).message).toContain(said);
    expect(result.stderr).toContain(said);
  });

  it("2: commander's did-you-mean is a line of the message, not an escaped line break", async () => {
    for (const args of [['--json', 'keys', 'lst'], ['--json', 'help', 'kyes']]) {
      const { message } = failureOf(await svc(args, server.env));
      expect(message.split('\n').length, message).toBeGreaterThan(1);
      expect(message).not.toContain('\\n');
    }
  });

  it('2: a 400 from the server (it refused what svc sent), with its status and code', async () => {
    const result = await svc(['keys', 'create', 'x'.repeat(200), '--json'], server.env);
    expect(result.exitCode).toBe(2);
    expect(failureOf(result)).toMatchObject({ status: 400, code: 'INVALID_REQUEST' });
  });

  it('3: no key at all, and a key the server refuses (401)', async () => {
    const none = failureOf(await svc(['keys', 'list', '--json'], { ...server.env, SVC_API_KEY: undefined }));
    expect(none).toMatchObject({ exitCode: 3, message: expect.stringContaining('Not logged in') });
    expect(none).not.toHaveProperty('status');
    const refused = failureOf(await svc(['keys', 'list', '--json'], { ...server.env, SVC_API_KEY: `sk_${'A'.repeat(64)}` }));
    expect(refused).toMatchObject({ exitCode: 3, status: 401, code: 'UNAUTHORIZED' });
  });

  it('4: a key that is not there, by id or by name (svc looked in the list too, so no one answer says it)', async () => {
    const error = failureOf(await svc(['keys', 'view', 'no-such-key', '--json'], server.env));
    expect(error).toEqual({ exitCode: 4, message: expect.stringContaining('No key with id or name no-such-key') });
  });

  it('5: a rate limit not waited for, as the 429 it was', async () => {
    await server.fault({ status: 429, retryAfter: '30', code: 'RATE_LIMITED' });
    const error = failureOf(await svc(['keys', 'list', '--json', '--no-wait'], server.env, { deps: { now: () => NOW } }));
    expect(error).toMatchObject({ exitCode: 5, status: 429, code: 'RATE_LIMITED', retryAfter: 30, retryAt: '2026-01-01T00:00:30.000Z', message: expect.stringContaining('--no-wait was given') });
  });

  it('5: a Retry-After of centuries: the seconds, and no time past year 9999', async () => {
    await server.fault({ status: 429, retryAfter: '99999999999999' });
    const error = failureOf(await svc(['keys', 'list', '--json', '--no-wait'], server.env, { deps: { now: () => NOW } }));
    expect(error).toMatchObject({ exitCode: 5, retryAfter: 99999999999999 });
    expect(error).not.toHaveProperty('retryAt');
  });

  it('9: a 403, distinct from the network and from a server error', async () => {
    await server.fault({ status: 403, code: 'FORBIDDEN' });
    const error = failureOf(await svc(['keys', 'list', '--json'], server.env));
    expect(error).toMatchObject({ exitCode: 9, status: 403, code: 'FORBIDDEN', message: expect.stringContaining('was refused (403 FORBIDDEN)') });
  });

  it("6: an audit that could not finish keeps the server's status under its own message", async () => {
    await server.fault({ status: 503, times: 0 });
    const result = await svc(['keys', 'audit', '--require-expiry', '--json', '--max-wait', '0'], server.env);
    const error = failureOf(result);
    expect(error).toMatchObject({ exitCode: 6, status: 503, code: 'UNAVAILABLE', message: expect.stringContaining('The audit did not finish (exit 6).') });
  });

  it('130: a create stopped by two Ctrl-Cs', async () => {
    await server.fault({ method: 'POST', path: '/user/api-keys', delayMs: 400, then: 'answer' });
    const result = await svc(['keys', 'create', 'stopped', '--json'], server.env, { deps: signals('SIGINT', 'SIGINT') });
    expect(result.exitCode).toBe(130);
    expect(failureOf(result).message).toContain("a key named 'stopped' may have been made");
  });

  it('a signal during a create: the document says the exit code the process ends with', async () => {
    await server.fault({ method: 'POST', path: '/user/api-keys', delayMs: 400, then: 'answer' });
    const result = await svc(['keys', 'create', 'terminated', '--json'], server.env, { deps: signals('SIGTERM', 'SIGTERM') });
    expect(result.exitCode).toBeGreaterThan(128);
    failureOf(result);
  });
});

describe('--json failures: the rules around them', () => {
  it("escapes server text in the message as stderr does, and keeps the code as the server's value", async () => {
    const spec = await startSpecServer();
    const said = { error: 'no\u001b[31m\nway\u202e', code: 'BAD\u009bCODE', details: ['one\u001b[2J'] };
    spec.rules.push({ method: 'GET', times: 1, then: { status: 409, body: JSON.stringify(said) } });
    try {
      const result = await svc(['keys', 'list', '--json'], { ...server.env, SVC_BASE_URL: spec.url, SVC_API_KEY: spec.apiKey });
      const error = failureOf(result);
      expect(error).toMatchObject({ exitCode: 1, status: 409, code: said.code, details: said.details });
      expect(error.message).toContain('(409 BAD\\x9bCODE): no\\x1b[31m\\nway\\u202e');
      expect(result.stderr).toContain(error.message.split('\n')[0]);
      expect(result.stdout).not.toMatch(/[\u001b\u009b\u202e]/);
    } finally {
      await spec.close();
    }
  });

  it('without --json, stdout stays empty', async () => {
    await server.fault({ status: 500, times: 0 });
    const result = await svc(['keys', 'list', '--max-wait', '0'], server.env);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
  });

  it('--json after -- is an argument, not the option', async () => {
    const result = await svc(['keys', 'view', '--', '--json'], server.env);
    expect(result.exitCode).toBe(4);
    expect(result.stdout).toBe('');
  });

  it('an incomplete list keeps its own document, with `incomplete`, as the one (exit 1)', async () => {
    const spec = await startSpecServer({ record: records.full, pages: { size: 1, style: 'token' } });
    try {
      spec.addKey('second');
      const result = await svc(['keys', 'list', '--json'], { ...server.env, SVC_BASE_URL: spec.url, SVC_API_KEY: spec.apiKey });
      expect(result.exitCode).toBe(1);
      const document = JSON.parse(result.stdout);
      expect(document).not.toHaveProperty('error');
      expect(document.incomplete).toEqual(expect.any(String));
      expect(result.stderr).toContain('The key list may be incomplete');
    } finally {
      await spec.close();
    }
  });

  it("a rotation that fails after printing the new key keeps that document, secret and all, as the one", async () => {
    const own = JSON.parse((await svc(['keys', 'create', 'json-own', '--json'], server.env)).stdout).key as { id: string; secret: string };
    const profileEnv = { ...server.env, SVC_API_KEY: undefined, SVC_PROFILE: 'json-rotate' };
    expect((await svc(['login', '--with-key'], profileEnv, { input: own.secret })).exitCode).toBe(0);
    const result = await svc(['keys', 'rotate', '--yes', own.id, '--json'], profileEnv);
    expect(result.exitCode).toBe(1);
    const document = JSON.parse(result.stdout);
    expect(document).not.toHaveProperty('error');
    expect(document.key.secret).toMatch(/^sk_[A-Za-z0-9]{64}$/);
    expect(result.stderr).toContain("Profile 'json-rotate' still holds the old key");
  });

  it('a create whose answer was lost: the key svc told for its own in `orphans`, revoked; the keys it could not tell in `candidates`', async () => {
    await server.fault({ method: 'POST', path: '/user/api-keys', status: 503, after: true });
    const marked = failureOf(await svc(['keys', 'create', 'json-lost', '--expires-in', '1d', '--json'], server.env));
    expect(marked).toMatchObject({ exitCode: 1, status: 503, orphans: [{ name: 'json-lost', revoked: true }], candidates: [] });
    await server.fault({ method: 'POST', path: '/user/api-keys', status: 503, after: true });
    const unmarked = failureOf(await svc(['keys', 'create', 'json-lost', '--json', '--no-wait'], server.env));
    expect(unmarked).toMatchObject({ exitCode: 1, orphans: [], candidates: [{ name: 'json-lost', createdAt: expect.stringMatching(/Z$/) }] });
    expect(unmarked.message).toContain(`svc keys revoke ${unmarked.candidates![0]!.id}`);
  });

  it("a lost create's key that svc could not revoke: its id is a field for the script to act on, and it is still live", async () => {
    await server.fault({ method: 'POST', path: '/user/api-keys', status: 503, after: true }, { method: 'DELETE', path: '/user/api-keys/*', status: 500, times: 0 });
    const error = failureOf(await svc(['keys', 'create', 'json-left', '--expires-in', '1d', '--json'], server.env));
    expect(error).toMatchObject({ exitCode: 1, orphans: [{ id: expect.any(String), name: 'json-left', revoked: false }], candidates: [] });
    const { id } = error.orphans![0]!;
    expect(await server.left([id])).toEqual([id]);
    expect(error.message).toContain(`svc keys revoke ${id}`);
  });

  it('the fields are only on a create whose outcome is unknown', async () => {
    const error = failureOf(await svc(['keys', 'view', 'no-such-key', '--json'], server.env));
    expect(error).not.toHaveProperty('orphans');
    expect(error).not.toHaveProperty('candidates');
  });

  it("a create's answer svc could not read goes inside the document, the secret with it", async () => {
    const spec = await startSpecServer();
    const cut = `{"id":"k1","name":"garbled","secret":"sk_${'B'.repeat(64)}"`;
    spec.rules.push({ method: 'POST', times: 1, then: { status: 201, body: cut, headers: () => ({ 'content-type': 'application/json' }) } });
    try {
      const result = await svc(['keys', 'create', 'garbled', '--json'], { ...server.env, SVC_BASE_URL: spec.url, SVC_API_KEY: spec.apiKey });
      expect(result.exitCode).toBe(1);
      const error = failureOf(result);
      expect(error.answer).toBe(cut);
    } finally {
      await spec.close();
    }
  });
});

describe("--json failures: the reference server's own rate limiter", () => {
  /** Uses up this world's workspace's requests (free: 30 a minute), in a window that ends in `seconds`. */
  async function exhaust(seconds: number): Promise<void> {
    await windowEndsIn(server, seconds);
    const key = server.env.SVC_API_KEY;
    while ((await call(server.url, 'GET', '/api/service/workspace', key)).status !== 429);
  }

  afterEach(async () => {
    await call(server.url, 'POST', '/_local/clock', server.adminToken, { advanceSeconds: 60 });
  });

  it.each([
    ['--no-wait', ['--no-wait'], '--no-wait was given'],
    ['a wait that would pass --max-wait', ['--max-wait', '5'], 'waiting longer would pass --max-wait (0 s waited already)'],
  ])('a real 429 under %s keeps its code and says when to try again', async (_, flags, said) => {
    await exhaust(40);
    const error = failureOf(await svc(['keys', 'list', '--json', ...flags], server.env, { deps: { now: () => NOW } }));
    expect(error).toMatchObject({ exitCode: 5, status: 429, code: 'RATE_LIMITED', message: expect.stringContaining(said) });
    // Retry-After counts the window's seconds left, rounded up; the requests before took some of them.
    expect(error.retryAfter).toBeGreaterThanOrEqual(20);
    expect(error.retryAfter).toBeLessThanOrEqual(41);
    expect(error.retryAt).toBe(new Date(NOW + error.retryAfter! * 1000).toISOString());
    expect(error.message).toContain(`Try again in ${error.retryAfter} s`);
  });

  it('after a wait, the 429 that would pass --max-wait is the one the document tells', async () => {
    await exhaust(40);
    // A first 429 that asks for 10 s; svc's sleep moves the server's clock on, and the limiter answers the next.
    await server.fault({ status: 429, retryAfter: '10', code: 'RATE_LIMITED' });
    const result = await svc(['keys', 'list', '--json', '--max-wait', '20'], server.env, { server });
    const error = failureOf(result);
    expect(result.slept).toHaveLength(1);
    expect(error).toMatchObject({ exitCode: 5, status: 429, code: 'RATE_LIMITED', message: expect.stringContaining('(11 s waited already)') });
    expect(error.retryAfter).toBeGreaterThan(10);
    expect(error.retryAfter).toBeLessThanOrEqual(31);
  });
});

describe('--json failures: each status as svc tells it', () => {
  // keys list reads GET /user/api-keys: svc's own collection, where a 404 or 405 means the server lacks the endpoint (§C6).
  it.each([
    [400, 'json', 2, 'failed (400 INVALID_REQUEST)'],
    [403, 'json', 9, 'GET /api/service/user/api-keys was refused (403 INVALID_REQUEST)'],
    [403, 'html', 9, 'was refused (403) by the server or a proxy in front of it, answered with text/html'],
    [404, 'json', 1, 'does not offer GET /api/service/user/api-keys (404 NOT_FOUND)'],
    [405, 'json', 1, 'does not offer GET /api/service/user/api-keys (405 METHOD_NOT_ALLOWED)'],
    [409, 'json', 1, 'failed (409 INVALID_REQUEST)'],
    [413, 'json', 2, 'the server or a proxy in front of it refused the request as too large (413 PAYLOAD_TOO_LARGE)'],
    [413, 'html', 2, 'the server or a proxy in front of it refused the request as too large (413), answered with text/html'],
    [413, 'empty', 2, 'the server or a proxy in front of it refused the request as too large (413).'],
    [403, 'empty', 9, 'GET /api/service/user/api-keys was refused (403).'],
    [422, 'json', 2, 'failed (422 INVALID_REQUEST)'],
    [500, 'json', 1, 'failed (500 INTERNAL)'],
    [502, 'html', 1, 'failed with a server error (502), answered with text/html'],
  ] as const)('%i with a %s body: exit %i, "%s"', async (status, body, exitCode, said) => {
    await server.fault({ status, body, times: 0 });
    const result = await svc(['keys', 'list', '--json', '--max-wait', '0'], server.env);
    const error = failureOf(result);
    expect(error).toMatchObject({ exitCode, status });
    expect(error.message).toContain(said);
    expect(result.stderr.replace(/\n */g, ' ')).toContain(said);
    expect(error.message).not.toContain("the service's address?");
    if (body === 'json') expect(error.body).toMatchObject({ error: expect.any(String) });
    else expect(error).not.toHaveProperty('body');
  });
});
