// tier: in-process
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/server/app.js';
import { Clock } from '../../src/server/clock.js';
import { FaultTable } from '../../src/server/faults.js';
import { LateChanges } from '../../src/server/late-changes.js';
import { FixedWindowLimiter } from '../../src/server/limiter.js';
import { StateFileError } from '../../src/server/persistence.js';
import { RequestLog } from '../../src/server/request-log.js';
import { Store } from '../../src/server/store.js';
import { parseResponse, rawRequest, startTestServer, UNAUTHORIZED_BODY, type RawAnswer, type TestServer } from './helpers.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ plan: 'pro', timeouts: { headersMs: 400, requestMs: 800 } });
});
afterAll(() => t.close());

function expectJsonError(answer: RawAnswer, status: number, code: string): void {
  expect(answer.status, answer.raw).toBe(status);
  expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(JSON.parse(answer.body)).toEqual({ error: expect.any(String), code });
  expect(answer.body).not.toMatch(/\n\s+at /);
}

const GET = (path: string, headers = '') => `GET ${path} HTTP/1.1\r\nHost: x\r\n${headers}\r\n`;

describe('malformed HTTP gets a JSON answer, never a bare one', () => {
  it.each([
    ['an unknown method', 'FROB /api/service/workspace HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['raw bytes in the path', Buffer.from('GET /api/\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1')],
    ['a bad Content-Length', 'POST /api/service/user/api-keys HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n'],
    ['two Content-Lengths that disagree', 'POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab'],
    ['garbage', '\x00\x01\x02 hello\r\n\r\n'],
  ])('400 for %s', async (_, bytes) => {
    expectJsonError(await rawRequest(t.port, bytes), 400, 'INVALID_REQUEST');
  });

  it('400 for a broken chunk size while the handler reads the body', async () => {
    const head = `POST /api/service/user/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.apiKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    expectJsonError(await rawRequest(t.port, `${head}zz\r\n`), 400, 'INVALID_REQUEST');
  });

  it('431 for headers past node\'s 16 KiB limit', async () => {
    expectJsonError(await rawRequest(t.port, GET('/api/service/workspace', `X-Big: ${'a'.repeat(20_000)}\r\n`)), 431, 'INVALID_REQUEST');
  });

  it('405 for CONNECT: this is no proxy', async () => {
    expectJsonError(await rawRequest(t.port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'), 405, 'METHOD_NOT_ALLOWED');
  });

  it('417 for an Expect other than 100-continue', async () => {
    expectJsonError(await rawRequest(t.port, GET('/api/service/workspace', 'Expect: teapot\r\n')), 417, 'INVALID_REQUEST');
  });

  it('a request without Host is still answered in JSON', async () => {
    const answer = await rawRequest(t.port, 'GET /api/service/workspace HTTP/1.1\r\n\r\n');
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toEqual(UNAUTHORIZED_BODY);
  });

  it('an absolute-form target is served by its path', async () => {
    const answer = await rawRequest(t.port, GET('http://x/api/service/workspace', `Authorization: Bearer ${t.apiKey}\r\n`));
    expect(answer.status).toBe(200);
  });

  it('two Authorization headers are refused even when both hold the right key', async () => {
    const auth = `Authorization: Bearer ${t.apiKey}\r\n`;
    const answer = await rawRequest(t.port, GET('/api/service/workspace', auth + auth));
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toEqual(UNAUTHORIZED_BODY);
  });

  it('HEAD on a known path is 405 without a body', async () => {
    const answer = await rawRequest(
      t.port,
      `HEAD /api/service/workspace HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.apiKey}\r\nConnection: close\r\n\r\n`,
    );
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('GET');
    expect(answer.body).toBe('');
  });

  it('survives a storm of odd requests without a 5xx or a non-JSON body', async () => {
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'MKCOL', 'PURGE'];
    const paths = ['/', '/api/service', '/api/service/', '/api/service/user/api-keys/%', '/api/service/user/api-keys/%C0%AF',
      '/api/service/user/api-keys/key_%00', '/_local/users/%ZZ/active-workspace', '/_local/workspaces/..%2f..', '/api/service//workspace', '*'];
    const bodies = ['', '{', '{"name":"\\ud800"}', '[[[[[[[[[[', '{"__proto__":{"x":1},"name":"p"}', '{"name":"ok","expiresAt":"9999-12-31T23:59:59Z"}', '\u0000\u0001'];
    const auths = ['', `Authorization: Bearer ${t.apiKey}\r\n`, 'Authorization: Bearer test-admin-token\r\n', 'Authorization: Bearer\r\n'];
    const requests: Promise<RawAnswer>[] = [];
    let i = 0;
    for (const method of methods) {
      for (const path of paths) {
        const body = bodies[i % bodies.length]!;
        const auth = auths[i++ % auths.length]!;
        const length = Buffer.byteLength(body);
        requests.push(
          rawRequest(t.port, `${method} ${path} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n${body}`),
        );
      }
    }
    for (const [n, answer] of (await Promise.all(requests)).entries()) {
      expect(answer.status, answer.raw).toBeLessThan(500);
      const head = methods[Math.floor(n / paths.length)] === 'HEAD';
      if (answer.status !== 204 && !head) expect(() => JSON.parse(answer.body), answer.raw).not.toThrow();
    }
    // Still serving.
    expect((await t.api('GET', '/workspace')).status).toBe(200);
  });
});

/** A socket that collects what the server sends and notes when it hangs up. */
function openSocket(): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  return new Promise((resolve) => {
    const socket = connect(t.port, '127.0.0.1');
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString('latin1')));
    socket.on('error', () => {});
    const closed = new Promise<void>((done) => socket.on('close', () => done()));
    socket.on('connect', () => resolve({ socket, received: () => data, closed }));
  });
}

describe('body limit while streaming', () => {
  it('answers 413 as soon as a chunked body passes 64 KiB, without waiting for its end, and closes', async () => {
    const { socket, received, closed } = await openSocket();
    socket.write(
      `POST /api/service/user/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.apiKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    const chunk = 'x'.repeat(8 * 1024);
    let sent = 0;
    // An endless body: only the server can end this exchange.
    while (!parseResponse(received(), false) && sent < 8 * 1024 * 1024) {
      if (!socket.writable) break;
      socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      sent += chunk.length;
      await new Promise((r) => setTimeout(r, 2));
    }
    await closed;
    const answer = parseResponse(received(), true)!;
    expectJsonError(answer, 413, 'PAYLOAD_TOO_LARGE');
    expect(answer.headers.connection).toBe('close');
    expect(answer.headers['ratelimit-limit']).toBe('1000');
    expect(sent).toBeLessThan(1024 * 1024);
  });

  it('answers 413 at once for a declared Content-Length over the limit, before any body byte', async () => {
    const { socket, received, closed } = await openSocket();
    socket.write(`PATCH /api/service/user/api-keys/key_x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.apiKey}\r\nContent-Length: 10000000\r\n\r\n`);
    await closed;
    expectJsonError(parseResponse(received(), true)!, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('keeps a connection alive after an ordinary answer', async () => {
    const { socket, received } = await openSocket();
    const req = GET('/api/service/workspace', `Authorization: Bearer ${t.apiKey}\r\n`);
    socket.write(req + req);
    await expect.poll(() => received().split('HTTP/1.1 200').length - 1).toBe(2);
    socket.destroy();
  });
});

describe('slow clients', () => {
  it('cuts off a client that trickles its headers (408), while others are served', async () => {
    const slow = await openSocket();
    slow.socket.write('GET /api/service/workspace HTTP/1.1\r\nHost: x\r\n');
    expect((await t.api('GET', '/workspace')).status).toBe(200);
    // The drip goes on until the server cuts it off: a timeout that each new line put off would never end it.
    const drip = setInterval(() => slow.socket.writable && slow.socket.write('X-Drip: 1\r\n'), 100);
    await slow.closed;
    clearInterval(drip);
    expectJsonError(parseResponse(slow.received(), true)!, 408, 'INVALID_REQUEST');
  });

  it('cuts off a body that never finishes (408)', async () => {
    const slow = await openSocket();
    slow.socket.write(
      `POST /api/service/user/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":`,
    );
    await slow.closed;
    expectJsonError(parseResponse(slow.received(), true)!, 408, 'INVALID_REQUEST');
  });

  it('closes idle connections that opened and said nothing', async () => {
    const idle = await openSocket();
    await idle.closed;
    expectJsonError(parseResponse(idle.received(), true)!, 408, 'INVALID_REQUEST');
  });
});

describe('unexpected failures', () => {
  let server: Server;
  let port: number;
  const logged: unknown[] = [];
  let secret: string;
  beforeAll(async () => {
    const clock = new Clock();
    const store = new Store(clock);
    const { user } = store.createUser('u', 'free');
    secret = store.createKey(user, 'k', null).secret;
    store.keyPage = () => {
      throw new Error('listing exploded');
    };
    server = createServer(
      createApp({
        store,
        clock,
        limiter: new FixedWindowLimiter(() => clock.now()),
        save: () => Promise.reject(new StateFileError('cannot write state.json: no space left on the device')),
        whenDurable: () => Promise.resolve(),
        adminToken: 'admin',
        faults: new FaultTable(),
        requestLog: new RequestLog(),
        lateChanges: new LateChanges(clock),
        instance: 'mem-test',
        reset: () => Promise.reject(new Error('no reset here')),
        hang: () => {},
        isClosing: () => false,
        logError: (error) => logged.push(error),
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('answers a thrown exception with a plain 500 INTERNAL, rate headers kept, the error logged', async () => {
    const answer = await rawRequest(port, GET('/api/service/user/api-keys', `Authorization: Bearer ${secret}\r\n`));
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.body)).toEqual({ error: 'Internal server error', code: 'INTERNAL' });
    expect(answer.headers['ratelimit-limit']).toBe('30');
    expect(logged.some((e) => (e as Error).message === 'listing exploded')).toBe(true);
  });

  it('answers 503 UNAVAILABLE when state cannot be saved, so a mutation is never acknowledged unsaved', async () => {
    const body = '{"name":"x"}';
    const answer = await rawRequest(
      port,
      `POST /api/service/user/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${secret}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body)).toEqual({ error: expect.stringContaining('not made'), code: 'UNAVAILABLE' });
    expect(answer.body).not.toContain('sk_');
    expect(answer.body).not.toContain('no space');
  });
});
