// undici's entry point also loads fetch, WebSocket, caching and more: about
// twice the code and, measured here, more than twice the load time. Only the
// dispatcher and `request` are needed; the proxy agent is loaded only when
// a proxy is configured. These are private files, so undici is pinned
// exactly; test/docs/undici-internals.test.ts fails if they move.
import Agent from 'undici/lib/dispatcher/agent.js';
import request from 'undici/lib/api/api-request.js';
import type { Dispatcher } from 'undici';
import { setFlagsFromString } from 'node:v8';
import { TransportError } from './errors.js';
import { isLoopbackHost } from './loopback.js';

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

/** The proxy variables of the environment, as curl and gh read them (docs/contract.md §C1). */
export interface ProxySettings {
  httpProxy?: string;
  httpsProxy?: string;
  noProxy?: string;
}

export interface TransportOptions {
  proxy?: ProxySettings;
  /** Told once per origin whether its requests go through a proxy (`--verbose`). */
  log?: (line: string) => void;
}

/** A larger answer is abandoned: no answer of the API comes near it, and memory is the user's. */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

const NEVER_CONNECTED: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  EAI_AGAIN: 'host name look-up failed',
  UND_ERR_CONNECT_TIMEOUT: 'timed out connecting',
};

/** Failures that a retry cannot mend; each message names the fix. */
const FINAL: Record<string, string> = {
  ENOTFOUND: 'host not found: no such host name (check the base URL)',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the server\'s certificate is self-signed and not trusted',
  SELF_SIGNED_CERT_IN_CHAIN: 'the server\'s certificate chain ends in a self-signed certificate that is not trusted',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the server\'s certificate was issued by a CA that is not trusted',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'the server\'s certificate was issued by a CA that is not trusted',
  UNABLE_TO_GET_ISSUER_CERT: 'the server\'s certificate was issued by a CA that is not trusted',
  CERT_HAS_EXPIRED: 'the server\'s certificate has expired',
  CERT_NOT_YET_VALID: 'the server\'s certificate is not valid yet',
  ERR_TLS_CERT_ALTNAME_INVALID: 'the server\'s certificate is for another host name',
  UND_ERR_INVALID_ARG: 'the request could not be sent as given',
};

const CA_HINT = 'If the server uses a private or self-signed CA, put that CA\'s certificate (PEM) in NODE_EXTRA_CA_CERTS.';

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return (error as { code?: string }).code;
}

export function classifyTransportError(error: unknown, timeoutMs: number): TransportError {
  if (error instanceof TransportError) return error;
  const name = (error as { name?: string }).name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new TransportError(`no answer within ${timeoutMs} ms`, true);
  }
  const code = errorCode(error);
  const detail = (error as Error).message || String(error);
  if (code && code in NEVER_CONNECTED) return new TransportError(NEVER_CONNECTED[code]!, false);
  if (code && code in FINAL) {
    const certificate = code !== 'ENOTFOUND' && code !== 'UND_ERR_INVALID_ARG';
    const message = code === 'UND_ERR_INVALID_ARG' ? `${FINAL[code]} (${detail})` : FINAL[code]!;
    return new TransportError(certificate ? `${message} (${code}). ${CA_HINT}` : message, false, true);
  }
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') {
    return new TransportError('the connection was closed before an answer came', true);
  }
  return new TransportError(code ? `${detail} (${code})` : detail, true);
}

export function createUndiciTransport(options: TransportOptions = {}): Transport {
  // undici parses HTTP with llhttp compiled to WebAssembly. A CLI makes a
  // request or three and exits, so V8's optimising tier-up of that module is
  // pure cost: measured here, it about doubles a one-request run's wall time
  // and memory. Baseline (Liftoff) code parses these small answers fine. The
  // flag is read when undici compiles the module, on the first connection.
  setFlagsFromString('--liftoff-only');
  const agentOptions = { keepAliveTimeout: 10_000, connections: 8 };
  const direct = new Agent(agentOptions);
  const { proxy } = options;
  const proxied = proxy && (proxy.httpProxy || proxy.httpsProxy) ? loadProxyAgent(proxy, agentOptions) : undefined;
  const told = new Set<string>();

  const dispatcherFor = async (url: URL): Promise<Dispatcher> => {
    if (!proxied || isLoopbackHost(url.hostname)) return direct;
    const agent = await proxied;
    if (options.log && !told.has(url.origin)) {
      told.add(url.origin);
      options.log(`* ${url.origin}: through the proxy in ${url.protocol === 'https:' ? 'HTTPS_PROXY' : 'HTTP_PROXY'} unless NO_PROXY names it`);
    }
    return agent;
  };

  return async (req) => {
    try {
      const url = new URL(req.url);
      const res = await request.call(await dispatcherFor(url), {
        origin: url.origin,
        path: url.pathname + url.search,
        method: req.method as 'GET',
        // The service never compresses, but a proxy may; svc decodes what comes anyway.
        headers: { 'accept-encoding': 'identity', ...req.headers },
        body: req.body,
        signal: AbortSignal.timeout(req.timeoutMs),
      });
      const bytes = await readCapped(res.body);
      return { status: res.statusCode, headers: res.headers, text: decode(bytes, res.headers['content-encoding']) };
    } catch (error) {
      throw classifyTransportError(error, req.timeoutMs);
    }
  };
}

async function loadProxyAgent(proxy: ProxySettings, agentOptions: object): Promise<Dispatcher> {
  const [{ default: EnvHttpProxyAgent }, { default: DispatcherClass }, { default: connect }] = await Promise.all([
    import('undici/lib/dispatcher/env-http-proxy-agent.js'),
    import('undici/lib/dispatcher/dispatcher.js'),
    import('undici/lib/api/api-connect.js'),
  ]);
  // The proxy agent opens its CONNECT tunnel with dispatcher.connect(), which
  // undici's own index attaches to Dispatcher.prototype; this transport skips
  // that index, so the one method the tunnel needs is attached the same way.
  DispatcherClass.prototype.connect ??= connect;
  // proxyTunnel false: plain http goes to the proxy as a forwarded request, as curl sends it; https still tunnels (CONNECT).
  return new EnvHttpProxyAgent({ ...agentOptions, ...proxy, noProxy: proxy.noProxy ?? '', proxyTunnel: false });
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_RESPONSE_BYTES) {
      body.destroy();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

function tooLarge(): TransportError {
  return new TransportError(`the answer is larger than ${MAX_RESPONSE_BYTES / 1024 / 1024} MiB; svc abandoned it`, true, true);
}

/** A body a server or proxy compressed although svc asked for identity (docs/contract.md §A1). */
function decode(bytes: Buffer, encoding: string | string[] | undefined): string {
  const coding = String(encoding ?? 'identity').trim().toLowerCase();
  if (coding === 'identity' || coding === '' || bytes.length === 0) return bytes.toString('utf8');
  // Loaded on first use; not import(): code holding an import() makes Node
  // set up its ES module loader for the whole bundle as it loads.
  const zlib = process.getBuiltinModule('node:zlib');
  const options = { maxOutputLength: MAX_RESPONSE_BYTES };
  try {
    if (coding === 'gzip' || coding === 'x-gzip') return zlib.gunzipSync(bytes, options).toString('utf8');
    if (coding === 'deflate') return zlib.inflateSync(bytes, options).toString('utf8');
    if (coding === 'br') return zlib.brotliDecompressSync(bytes, options).toString('utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge();
    throw new TransportError(`the answer claims ${coding} encoding but does not decode (${(error as Error).message})`, true, true);
  }
  throw new TransportError(`the answer is in an encoding svc does not read: ${coding}`, true, true);
}
