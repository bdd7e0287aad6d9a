// undici's entry point also loads fetch, WebSocket, caching and more: about
// twice the code and, measured here, more than twice the load time. Only the
// dispatcher and `request` are needed; the proxy agent is loaded only when
// a request goes through a proxy (client/proxy.ts decides which). These are private files, so undici is pinned
// exactly; test/docs/undici-internals.test.ts fails if they move.
import Agent from 'undici/lib/dispatcher/agent.js';
import request from 'undici/lib/api/api-request.js';
import symbols from 'undici/lib/core/symbols.js';
import type { Dispatcher } from 'undici';
import { TransportError } from './errors.js';
import { chooseProxy, describeChoice, hasProxySettings, unusableProxyMessage, type ProxyChoice, type ProxySettings } from './proxy.js';
import { useBaselineWasm } from './v8-flags.js';

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

export interface TransportOptions {
  proxy?: ProxySettings;
  /** Told once per origin whether its requests go through a proxy, and which (`--verbose`). */
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

/**
 * What mends a certificate svc will not trust: a CA only for one it cannot
 * trace to a trusted one; a certificate for another name wants the name it
 * was issued for, and one out of date a new certificate.
 */
function certificateHint(code: string, who = 'server'): string {
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return ` Use the host name the ${who}'s certificate was issued for${who === 'server' ? ' in the base URL' : ''}.`;
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return ` The ${who} needs a current certificate (or this machine's clock is wrong).`;
  return ` If the ${who} uses a private or self-signed CA, put that CA's certificate (PEM) in NODE_EXTRA_CA_CERTS.`;
}

/**
 * What OpenSSL says when the first bytes back are not a TLS record: an
 * http:// server answering a handshake with a plain HTTP error. Nothing was
 * sent (the request waits for the handshake), and nothing will change on a retry.
 */
const NOT_TLS = new Set(['ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG', 'ERR_SSL_HTTP_REQUEST']);

/**
 * A proxy that would not open the CONNECT tunnel to the service: a status
 * other than 200, or the connection closed. Thrown from inside undici's proxy
 * agent (see loadProxyAgent), so it fails the request instead of being retried.
 */
class ProxyTunnelError extends Error {
  readonly code = 'SVC_PROXY_TUNNEL';
  constructor(
    /** The proxy's status, or null when it closed the connection instead. */
    readonly status: number | null,
    /** The proxy's address without credentials, and the variable it came from. */
    readonly proxy: string,
    readonly variable: string,
    readonly hasCredentials: boolean,
    readonly target: string,
  ) {
    super(`the proxy refused the tunnel (${status ?? 'closed'})`);
    this.name = 'ProxyTunnelError';
  }
}

/**
 * The connection to the proxy itself failed (refused, its TLS handshake,
 * its certificate): thrown from the proxy agent's client for the proxy
 * (loadProxyAgent), before any tunnel, so nothing of it is the service's.
 * It has no code of its own: errorCode reads its cause's.
 */
class ProxyConnectionError extends Error {
  constructor(readonly cause: unknown) {
    super((cause as Error)?.message ?? String(cause));
    this.name = 'ProxyConnectionError';
  }
}

/** The error and its causes, outermost first, as deep as undici and svc wrap them (`depth` at most). */
function causes(error: unknown, depth: number): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current && chain.length < depth; current = (current as { cause?: unknown }).cause) chain.push(current);
  return chain;
}

function errorCode(error: unknown): string | undefined {
  for (const current of causes(error, 4)) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code;
  }
  return (error as { code?: string }).code;
}

export function classifyTransportError(error: unknown, timeoutMs: number, url?: string): TransportError {
  if (error instanceof TransportError) return error;
  if (error instanceof ProxyTunnelError) return new TransportError(proxyRefusal(error), false, true);
  const name = (error as { name?: string }).name;
  const detail = (error as Error).message || String(error);
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new TransportError(`no answer within ${timeoutMs} ms`, true);
  }
  const code = errorCode(error);
  if (code && NOT_TLS.has(code)) {
    const plain = url === undefined ? 'the same address with http://' : new URL(url).origin.replace(/^https:/, 'http:');
    return new TransportError(`the server speaks plain http, not TLS: try ${plain} as the base URL`, false, true);
  }
  if (code && code in NEVER_CONNECTED) return new TransportError(NEVER_CONNECTED[code]!, false, false, code === 'ECONNREFUSED');
  if (code && code in FINAL) {
    const certificate = code !== 'ENOTFOUND' && code !== 'UND_ERR_INVALID_ARG';
    const message = code === 'UND_ERR_INVALID_ARG' ? `${FINAL[code]} (${detail})` : FINAL[code]!;
    return new TransportError(certificate ? `${message} (${code}).${certificateHint(code)}` : message, false, true);
  }
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') {
    return new TransportError('the connection was closed before an answer came', true);
  }
  return new TransportError(code ? `${detail} (${code})` : detail, true);
}

/** A refused CONNECT in words that name the proxy and the fix; never the proxy's credentials. */
function proxyRefusal({ status, proxy, variable, hasCredentials, target }: ProxyTunnelError): string {
  const who = `the proxy in ${variable} (${proxy})`;
  if (status === null) return `${who} closed the connection when asked for a tunnel to ${target} (CONNECT)`;
  if (status === 407) {
    return hasCredentials
      ? `${who} did not accept the credentials in ${variable} (407 to CONNECT)`
      : `${who} wants credentials (407 to CONNECT): put them in ${variable} as http://user:password@host:port`;
  }
  if (status === 403) return `${who} does not allow a tunnel to ${target} (403 to CONNECT); its operator decides that, or NO_PROXY can send ${target} direct`;
  if (status === 502 || status === 503 || status === 504) return `${who} could not reach ${target} (${status} to CONNECT)`;
  return `${who} answered ${status} to CONNECT instead of opening a tunnel to ${target}`;
}

/** An informational status no server sends, for undici to read a 100 Continue by (see acceptUnaskedContinue). */
const UNNAMED_INTERIM = 199;

let continueAccepted = false;

/**
 * A server may send 1xx answers nobody asked for before the real one, and a
 * client must read past them (RFC 9110 §15.2), as curl and node:http do.
 * undici reads past a 103 but destroys the connection on a 100 Continue
 * ("bad response", client-h1.js onHeadersComplete), because it never sends
 * `Expect: 100-continue` (nodejs/undici#197, left as wontfix): measured in
 * 7.30.2, the latest 7.x, and in 8.13.1. Every request then failed as "closed
 * before an answer came", and a create's answer, with the only copy of its
 * secret, was thrown away. So its HTTP/1.1 parser is given a 100 as another
 * interim status, which it handles as it does a 103: the headers go to the
 * request's onInfo (unused here) and it reads on to the real answer. The
 * parser's class is private; the first connection undici makes (announced on
 * its diagnostics channel, after the parser is attached and before a byte
 * is read) hands over its prototype. A connection of another undici (Node's
 * own fetch) has no parser under this copy's symbol, and is passed by.
 */
function acceptUnaskedContinue(): void {
  if (continueAccepted) return;
  continueAccepted = true;
  const channels = process.getBuiltinModule('node:diagnostics_channel');
  const onConnected = (message: unknown) => {
    const socket = (message as { socket?: Record<symbol, object | undefined> }).socket;
    const parser = socket?.[symbols.kParser] as { onHeadersComplete?: unknown } | undefined;
    if (typeof parser?.onHeadersComplete !== 'function') return;
    channels.unsubscribe('undici:client:connected', onConnected);
    const prototype = Object.getPrototypeOf(parser) as { onHeadersComplete(statusCode: number, ...rest: unknown[]): number };
    const headersComplete = prototype.onHeadersComplete;
    prototype.onHeadersComplete = function (statusCode, ...rest) {
      return headersComplete.call(this, statusCode === 100 ? UNNAMED_INTERIM : statusCode, ...rest);
    };
  };
  channels.subscribe('undici:client:connected', onConnected);
}

export function createUndiciTransport(options: TransportOptions = {}): Transport {
  useBaselineWasm();
  acceptUnaskedContinue();
  const pooled = { keepAliveTimeout: 10_000, connections: 8 };
  // A POST goes out on a connection of its own, closed after its answer: undici
  // reuses an idle keep-alive connection, and checks it only for a close or
  // reset already received (client-h1.js, scheduleIdleSocketValidation,
  // GHSA-35p6-xmwp-9g52); a server that drops it as the request arrives fails
  // the request, which for a create svc may not retry. undici's own guard for
  // non-idempotent requests only keeps them from being pipelined behind
  // others (Dispatcher.md, "Non-idempotent requests will not be pipelined");
  // `pipelining: 0` disables keep-alive for the dispatcher (Client.md), so
  // every connection it makes is new.
  const single = { pipelining: 0, connections: 8 };
  const direct = { pooled: new Agent(pooled), single: lazy(() => new Agent(single)) };
  const settings = options.proxy ?? {};
  const shouldTell = options.log && hasProxySettings(settings) ? options.log : undefined;
  // One pair of agents per proxy and the variable it came from (which its errors name), made on its first
  // request: none at all, and no proxy code loaded, for a direct request.
  const proxies = new Map<string, { pooled: () => Promise<Dispatcher>; single: () => Promise<Dispatcher> }>();
  const told = new Set<string>();

  const dispatcherFor = async (url: URL, method: string): Promise<{ dispatcher: Dispatcher; choice: ProxyChoice }> => {
    const choice = chooseProxy(settings, url);
    if (shouldTell && !told.has(url.origin)) {
      told.add(url.origin);
      shouldTell(describeChoice(choice, settings, url.origin));
    }
    if (choice.via === 'invalid') throw new TransportError(unusableProxyMessage(choice), false, true);
    const reused = method !== 'POST';
    if (choice.via === 'direct') return { dispatcher: reused ? direct.pooled : direct.single(), choice };
    const key = `${choice.variable} ${choice.url}`;
    let agents = proxies.get(key);
    if (!agents) {
      agents = { pooled: lazy(() => loadProxyAgent(choice, pooled)), single: lazy(() => loadProxyAgent(choice, single)) };
      proxies.set(key, agents);
    }
    return { dispatcher: await (reused ? agents.pooled() : agents.single()), choice };
  };

  return async (req) => {
    const url = new URL(req.url);
    const { dispatcher, choice } = await dispatcherFor(url, req.method);
    try {
      const res = await request.call(dispatcher, {
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
      if (choice.via === 'proxy') {
        const proxyFailed = proxyFailure(error, choice);
        if (proxyFailed) throw proxyFailed;
      } else if (mayBeTlsPort(url, error) && (await speaksTls(url, req.timeoutMs))) {
        const secure = url.origin.replace(/^http:/, 'https:');
        throw new TransportError(`the server speaks TLS, not plain http: try ${secure} as the base URL`, false, true);
      }
      throw classifyTransportError(error, req.timeoutMs, req.url);
    }
  };
}

/** What connecting to the proxy itself can fail with: nothing reached the service, and the proxy is what to look at. */
const PROXY_UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'host name look-up failed',
  UND_ERR_CONNECT_TIMEOUT: 'timed out connecting',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/**
 * A failure that is the proxy's, not the service's: svc's only connection
 * is to the proxy (the service's address is the proxy's to reach, and a
 * proxy says so with a status), so a connection that could not be made is
 * one to the proxy, named with its variable; never its credentials.
 */
function proxyFailure(error: unknown, choice: Extract<ProxyChoice, { via: 'proxy' }>): TransportError | undefined {
  const code = errorCode(error);
  if (code && code in PROXY_UNREACHABLE) {
    return new TransportError(`could not reach the proxy ${choice.address} (from ${choice.variable}): ${PROXY_UNREACHABLE[code]}`, false, true);
  }
  // An https:// proxy whose own certificate is not trusted: said of the proxy, not of the service behind it.
  if (code && code in FINAL && code !== 'UND_ERR_INVALID_ARG' && causes(error, 5).some((cause) => cause instanceof ProxyConnectionError)) {
    const what = FINAL[code]!.replace("the server's", "the proxy's");
    return new TransportError(`could not reach the proxy ${choice.address} (from ${choice.variable}): ${what} (${code}).${certificateHint(code, 'proxy')}`, false, true);
  }
  // undici's plain-http forwarding turns a proxy's 407 into an invalid-argument error of its own.
  if (/Proxy Authentication Required \(407\)/.test((error as Error)?.message ?? '')) {
    const who = `the proxy in ${choice.variable} (${choice.shown})`;
    return new TransportError(
      choice.hasCredentials
        ? `${who} did not accept the credentials in ${choice.variable} (407)`
        : `${who} wants credentials (407): put them in ${choice.variable} as http://user:password@host:port`,
      false,
      true,
    );
  }
  return undefined;
}

/**
 * A plain-http request that a TLS server ends: Node's closes the connection
 * without a byte, others answer with a TLS alert undici cannot parse as
 * HTTP. Either looks like a dropped connection, retried four times over
 * seconds, unless svc asks the port itself (speaksTls). Not through a
 * proxy: the connection there is the proxy's.
 */
function mayBeTlsPort(url: URL, error: unknown): boolean {
  if (url.protocol !== 'http:') return false;
  const code = (error as { code?: unknown }).code;
  const inner = errorCode(error);
  return code === 'UND_ERR_SOCKET' || inner === 'ECONNRESET' || inner === 'EPIPE' || (typeof inner === 'string' && inner.startsWith('HPE_'));
}

/**
 * Whether the port completes a TLS handshake: nothing of the request is
 * sent, and the certificate is not judged (a TLS server with an untrusted
 * one still wants https://, where svc then says what is wrong with it).
 * Decided by the handshake or its failure, within the request's timeout.
 */
function speaksTls(url: URL, timeoutMs: number): Promise<boolean> {
  const tls = process.getBuiltinModule('node:tls');
  const net = process.getBuiltinModule('node:net');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return new Promise((resolve) => {
    const socket = tls.connect({ host, port: Number(url.port || 80), rejectUnauthorized: false, ...(net.isIP(host) ? {} : { servername: host }) });
    const settle = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.once('secureConnect', () => settle(true));
    socket.once('error', () => settle(false));
    socket.once('close', () => settle(false));
    socket.setTimeout(timeoutMs, () => settle(false));
  });
}

function lazy<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

async function loadProxyAgent(choice: Extract<ProxyChoice, { via: 'proxy' }>, agentOptions: object): Promise<Dispatcher> {
  const [{ default: ProxyAgent }, { default: DispatcherClass }, { default: connect }, { default: Pool }] = await Promise.all([
    import('undici/lib/dispatcher/proxy-agent.js'),
    import('undici/lib/dispatcher/dispatcher.js'),
    import('undici/lib/api/api-connect.js'),
    import('undici/lib/dispatcher/pool.js'),
  ]);
  // The proxy agent opens its CONNECT tunnel with dispatcher.connect(), which
  // undici's own index attaches to Dispatcher.prototype; this transport skips
  // that index, so the one method the tunnel needs is attached the same way.
  DispatcherClass.prototype.connect ??= connect;
  const net = process.getBuiltinModule('node:net');
  // The proxy agent's client for the proxy itself (proxy-agent.js), with a
  // connect() that makes a refused tunnel an error of ours. undici reports a
  // CONNECT answered with another status than 200 as an abort, which reads as
  // a timeout; and a proxy that closes the connection as a socket error, on
  // which its client connects again at once, for ever, deaf to the request's
  // signal (client.js, onError spares UND_ERR_SOCKET): 4,000 connections a
  // second. Any other error of ours fails the request where it stands.
  const clientFactory = (origin: string | URL, options: object) => {
    const pool = new Pool(origin, options);
    const open = pool.connect.bind(pool);
    pool.connect = (async (params: Dispatcher.ConnectOptions) => {
      const target = String(params.path ?? '');
      const refused = (status: number | null) => new ProxyTunnelError(status, choice.shown, choice.variable, choice.hasCredentials, target);
      let answer: Dispatcher.ConnectData;
      // undici names the proxy's host as the TLS server name, an IP address too, which Node warns of (DEP0123)
      // on stderr; an IP address has no name to send.
      const named = net.isIP(String((params as { servername?: string }).servername ?? '')) === 0 ? params : { ...params, servername: undefined };
      try {
        answer = await open(named);
      } catch (error) {
        throw (error as { code?: string }).code === 'UND_ERR_SOCKET' ? refused(null) : new ProxyConnectionError(error);
      }
      if (answer.statusCode !== 200) {
        answer.socket.destroy();
        throw refused(answer.statusCode);
      }
      return answer;
    }) as typeof pool.connect;
    return pool;
  };
  // proxyTunnel false: plain http goes to the proxy as a forwarded request, as curl sends it; https still tunnels (CONNECT).
  return new ProxyAgent({ ...agentOptions, uri: choice.url, proxyTunnel: false, clientFactory } as ConstructorParameters<typeof ProxyAgent>[0]);
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
