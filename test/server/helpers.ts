import { connect } from 'node:net';
import { call, type Answer } from '../helpers/reference-server.mjs';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server/listen.js';

export const ADMIN_TOKEN = 'test-admin-token';

export type { Answer };

export interface TestServer {
  server: RunningServer;
  url: string;
  port: number;
  apiKey: string;
  /** A request under /api/service with `key` as the bearer (the bootstrap key unless given; null for none). */
  api(method: string, path: string, options?: CallOptions): Promise<Answer>;
  /** A request under /_local with the admin token. */
  admin(method: string, path: string, body?: unknown): Promise<Answer>;
  /** Moves the server clock to just after the start of the next rate window, so a test never straddles two. */
  startOfNextWindow(): Promise<void>;
  advance(seconds: number): Promise<void>;
  close(): Promise<void>;
}

export interface CallOptions {
  key?: string | null;
  /** Serialized as JSON with `Content-Type: application/json` unless `raw` is given. */
  body?: unknown;
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

export async function startTestServer(options: Partial<ServerOptions> = {}): Promise<TestServer> {
  const server = await startServer({ host: '127.0.0.1', port: 0, adminToken: ADMIN_TOKEN, ...options });
  const url = server.url;
  const apiKey = server.ready.apiKey!;

  const request = (method: string, path: string, auth: string | null, options: CallOptions): Promise<Answer> =>
    call(url, method, path, auth, options.body, { raw: options.raw, headers: options.headers });

  const t: TestServer = {
    server,
    url,
    port: Number(new URL(url).port),
    apiKey,
    api: (method, path, options = {}) =>
      request(method, `/api/service${path}`, options.key === undefined ? apiKey : options.key, options),
    admin: (method, path, body) => request(method, `/_local${path}`, ADMIN_TOKEN, body === undefined ? {} : { body }),
    async startOfNextWindow() {
      const now = Date.parse((await t.admin('GET', '/clock')).json.now);
      await t.advance((60_000 - (now % 60_000)) / 1000 + 0.01);
    },
    async advance(seconds) {
      const res = await t.admin('POST', '/clock', { advanceSeconds: seconds });
      if (res.status !== 200) throw new Error(`clock advance failed: ${res.text}`);
    },
    close: () => server.close(),
  };
  return t;
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything the server sent, for checks on framing. */
  raw: string;
}

/**
 * Sends bytes on a fresh TCP connection and reads until the server closes
 * it or a full response has arrived: for requests no HTTP client would send.
 */
export function rawRequest(port: number, bytes: string | Buffer, { endAfterWrite = false } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    const finish = () => {
      socket.destroy();
      const answer = parseResponse(received.toString('latin1'), true);
      if (answer) resolve(answer);
      else reject(new Error(`no complete response: ${JSON.stringify(received.toString('latin1'))}`));
    };
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (parseResponse(received.toString('latin1'), false)) finish();
    });
    socket.on('error', () => {});
    socket.on('close', finish);
    socket.write(bytes);
    if (endAfterWrite) socket.end();
  });
}

/** Null until a whole response is there; once the connection closed (`closed`), whatever arrived. */
export function parseResponse(text: string, closed: boolean): RawAnswer | null {
  const split = text.indexOf('\r\n\r\n');
  if (split === -1) return null;
  const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = text.slice(split + 4);
  const length = headers['content-length'];
  const status = Number(statusLine!.split(' ')[1]);
  if (!closed && length !== undefined && Buffer.byteLength(body, 'latin1') < Number(length)) return null;
  if (!closed && length === undefined && status !== 204) return null;
  return { status, headers, body: Buffer.from(body, 'latin1').toString('utf8'), raw: text };
}

export const UNAUTHORIZED_BODY = { error: 'Unauthorized: authentication failed', code: 'UNAUTHORIZED' };
