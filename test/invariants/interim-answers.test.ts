// tier: in-process
/**
 * Issue 36: 1xx answers nobody asked for, before the real one (RFC 9110
 * §15.2), as a server or a proxy in front of it may send them: a 100
 * Continue, a 103 Early Hints with headers. svc reads past them, on every
 * request and on the connection a create has to itself, whose answer holds
 * the only copy of a secret. The server is a raw socket: node:http would not
 * write a 100 unasked.
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUndiciTransport } from '../../src/client/transport.js';
import { svc, tempConfigDir } from '../helpers/in-process.js';

const config = tempConfigDir();
const SECRET = `sk_${'C'.repeat(64)}`;
const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';
const EARLY_HINTS = 'HTTP/1.1 103 Early Hints\r\nlink: </style.css>; rel=preload; as=style\r\n\r\n';

/** What the interim answers are before each real one; set by each test. */
let interim = '';
let server: Server;
let url: string;
const seen: string[] = [];
const sockets = new Set<Socket>();
/** How many requests each connection carried, since a test cleared it. */
const carried = new Map<Socket, number>();

function answer(socket: Socket, method: string, path: string): void {
  const [status, body] =
    method === 'POST' ? ['201 Created', { id: 'k_new', name: 'ci', secret: SECRET }] : path.endsWith('/user/api-keys') ? ['200 OK', { keys: [{ id: 'k_1', name: 'listed' }] }] : ['404 Not Found', { error: 'Not found' }];
  const text = JSON.stringify(body);
  socket.write(interim);
  socket.write(`HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
}

/** Requests one after another on a connection kept alive, each head then a body of its content-length. */
function serve(socket: Socket): void {
  sockets.add(socket);
  let buffered = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffered.length < end + 4 + length) return;
      buffered = buffered.subarray(end + 4 + length);
      const [method = '', path = ''] = head.split(' ');
      seen.push(`${method} ${path}`);
      carried.set(socket, (carried.get(socket) ?? 0) + 1);
      answer(socket, method, path);
    }
  });
  socket.on('error', () => {});
}

beforeAll(async () => {
  server = createServer(serve);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const env = () => ({ SVC_BASE_URL: url, SVC_API_KEY: `sk_${'a'.repeat(64)}`, SVC_CONFIG_DIR: config.dir });

describe.each([
  ['nothing (the baseline)', ''],
  ['a 100 Continue', CONTINUE],
  ['a 103 Early Hints with headers', EARLY_HINTS],
  ['a 100 Continue, then a 103', CONTINUE + EARLY_HINTS],
])('%s before each answer', (_, before) => {
  it('a GET reads past it to the answer', async () => {
    interim = before;
    const result = await svc(['keys', 'list'], env());
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('listed');
  });

  it('two GETs one after the other on one kept connection both read past it', async () => {
    interim = before;
    carried.clear();
    const transport = createUndiciTransport();
    for (let i = 0; i < 2; i++) {
      const res = await transport({ method: 'GET', url: `${url}/api/service/user/api-keys`, headers: {}, timeoutMs: 5_000 });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.text)).toEqual({ keys: [{ id: 'k_1', name: 'listed' }] });
      // undici checks an idle connection in the check phase before it takes it again; until then it opens another.
      await new Promise(setImmediate);
    }
    expect([...carried.values()]).toEqual([2]);
  });

  it('svc status reads past it on each of its requests', async () => {
    interim = before;
    const result = await svc(['status'], env());
    expect(result.exitCode, result.stderr).toBe(0);
  });

  it("a create's answer is read, and its secret shown", async () => {
    interim = before;
    seen.length = 0;
    const result = await svc(['keys', 'create', 'ci'], env());
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe(SECRET);
    expect(seen.filter((r) => r.startsWith('POST'))).toHaveLength(1);
  });
});
