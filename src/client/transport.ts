// undici's entry point also loads fetch, WebSocket, caching and more: about
// twice the code and, measured here, more than twice the load time. Only the
// dispatcher and `request` are needed. These are private files, so undici is
// pinned exactly; test/docs/undici-internals.test.ts fails if they move.
import Agent from 'undici/lib/dispatcher/agent.js';
import request from 'undici/lib/api/api-request.js';
import { setFlagsFromString } from 'node:v8';
import { TransportError } from './errors.js';

export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export type Transport = (req: HttpRequest) => Promise<HttpResponse>;

const NEVER_CONNECTED: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name look-up failed',
  UND_ERR_CONNECT_TIMEOUT: 'timed out connecting',
};

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

export function classifyTransportError(error: unknown, timeoutMs: number): TransportError {
  const name = (error as { name?: string }).name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new TransportError(`no answer within ${timeoutMs} ms`, true);
  }
  const code = errorCode(error);
  if (code && code in NEVER_CONNECTED) return new TransportError(NEVER_CONNECTED[code]!, false);
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') {
    return new TransportError('the connection was closed before an answer came', true);
  }
  const detail = (error as Error).message || String(error);
  return new TransportError(code ? `${detail} (${code})` : detail, true);
}

export function createUndiciTransport(): Transport {
  // undici parses HTTP with llhttp compiled to WebAssembly. A CLI makes a
  // request or three and exits, so V8's optimising tier-up of that module is
  // pure cost: measured here, it about doubles a one-request run's wall time
  // and memory. Baseline (Liftoff) code parses these small answers fine. The
  // flag is read when undici compiles the module, on the first connection.
  setFlagsFromString('--liftoff-only');
  const dispatcher = new Agent({ keepAliveTimeout: 10_000, connections: 8 });
  return async (req) => {
    try {
      const url = new URL(req.url);
      const res = await request.call(dispatcher, {
        origin: url.origin,
        path: url.pathname + url.search,
        method: req.method as 'GET',
        headers: req.headers,
        body: req.body,
        signal: AbortSignal.timeout(req.timeoutMs),
      });
      return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
    } catch (error) {
      throw classifyTransportError(error, req.timeoutMs);
    }
  };
}
