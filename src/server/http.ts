import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { ErrorBody, ErrorCode } from '../contract/errors.js';

export type Headers = Record<string, string | number | string[]>;

/** What a handler answers; app.ts turns it into bytes. */
export interface Reply {
  status: number;
  /** Absent only for 204. */
  body?: unknown;
  headers?: Headers;
}

/**
 * A body sent as it is rather than as JSON: what a proxy in front of the
 * service might answer (an HTML page, nothing at all). Only injected faults make one.
 */
export class TextBody {
  constructor(
    readonly text: string,
    /** Null for an empty body without a Content-Type. */
    readonly contentType: string | null,
  ) {}
}

/** A JSON body already written as text by asciiJson or key-json.ts, sent as it is. */
export class JsonText {
  constructor(readonly text: string) {}
}

/** An expected failure, thrown from deep inside a handler and answered as an error body. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Headers = {},
  ) {
    // Only ever answered, never logged, so nobody reads its stack; capturing one costs microseconds on every 401 and 429.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = stackTraceLimit;
  }

  toReply(): Reply {
    const body: ErrorBody = { error: this.message, code: this.code };
    return { status: this.status, body, headers: this.headers };
  }
}

/** The client went away mid-request; there is nobody left to answer. */
export class RequestAborted extends Error {}

export const MAX_BODY_BYTES = 64 * 1024;

/** `extra` headers (rate limits, Date) go over the reply's own. */
export function send(res: ServerResponse, reply: Reply, closeConnection: boolean, extra?: HeaderList): void {
  if (res.headersSent || res.destroyed) return;
  // A flat list of names and values, which writeHead takes as it is: merging objects and walking the result
  // key by key cost more than the rest of sending (callgrind). First the headers every response carries:
  // nothing here may be cached by a proxy or sniffed as HTML.
  const headers: HeaderList = ['cache-control', 'no-store', 'x-content-type-options', 'nosniff'];
  if (reply.headers) {
    setAll(headers, reply.headers);
    if (extra) for (let i = 0; i < extra.length; i += 2) setHeader(headers, extra[i] as string, extra[i + 1]!);
  } else if (extra) {
    // Nothing to replace: the caller's names are its own, none of the four above.
    for (let i = 0; i < extra.length; i++) headers.push(extra[i]!);
  }
  if (closeConnection) setHeader(headers, 'connection', 'close');
  if (reply.body === undefined) {
    res.writeHead(reply.status, headers);
    res.end();
    return;
  }
  if (reply.body instanceof TextBody) {
    const { text, contentType } = reply.body;
    if (contentType !== null) setHeader(headers, 'content-type', `${contentType}; charset=utf-8`);
    // Encoded once, here: a string body past Latin-1 would be measured, then joined to the header block and
    // encoded again by node, all of it, header block included, as the slow two-byte kind.
    const bytes = Buffer.from(text, 'utf8');
    setHeader(headers, 'content-length', bytes.length);
    res.writeHead(reply.status, headers);
    res.end(bytes);
    return;
  }
  // JSON is sent as ASCII text (asciiJson): its length is its byte count, and node joins it
  // to the header block and writes both at once, as Latin-1, which for ASCII is the bytes themselves.
  const text = reply.body instanceof JsonText ? reply.body.text : asciiJson(reply.body);
  setHeader(headers, 'content-type', JSON_TYPE);
  setHeader(headers, 'content-length', text.length);
  res.writeHead(reply.status, headers);
  res.end(text, 'latin1');
}

const NON_ASCII = /[\u0080-\uffff]/g;

/**
 * JSON.stringify, every character past ASCII written as its \u escape: the
 * same JSON value, in a string V8 keeps one byte per character, whose length
 * is its size on the wire. A pair of surrogates becomes two escapes, which
 * JSON reads back as the one character.
 */
export function asciiJson(value: unknown): string {
  const json = JSON.stringify(value);
  const escaped = json.replace(NON_ASCII, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  // Escaped, the text is ASCII but V8 keeps it in two bytes a character, as the original was; every
  // string built on it would be two-byte too, and sending one costs a conversion of all of it. Read
  // back from Latin-1 bytes, it is a one-byte string.
  return escaped === json ? json : Buffer.from(escaped, 'latin1').toString('latin1');
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** Names and values taking turns, as node's writeHead takes them; each name once. */
export type HeaderList = (string | number | string[])[];

/** A later value for a name replaces the earlier one, as it would in one object. */
function setHeader(list: HeaderList, name: string, value: string | number | string[]): void {
  for (let i = 0; i < list.length; i += 2) {
    if (list[i] === name) {
      list[i + 1] = value;
      return;
    }
  }
  list.push(name, value);
}

function setAll(list: HeaderList, headers: Headers): void {
  for (const name in headers) setHeader(list, name, headers[name]!);
}

/** A request that announced a body it has not finished sending. */
export function hasUnreadBody(req: IncomingMessage): boolean {
  return hasAnnouncedBody(req) && !req.readableEnded;
}

/** Transfer-Encoding or a non-zero Content-Length: without either a request has no body (RFC 9112 §6.3). */
export function hasAnnouncedBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

const NO_BODY = Buffer.alloc(0);

/**
 * Reads the body, refusing it as soon as it passes `limit` bytes: an
 * announced Content-Length over the limit is refused before reading
 * anything, a chunked body the moment the running count passes it. The rest
 * is left unread; the 413 then closes the connection.
 */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  // Without Transfer-Encoding or a non-zero Content-Length a request has no body (RFC 9112 §6.3);
  // waiting for its 'end' would cost the hot GET path a stream switched to flowing and a trip round the event loop.
  if (!hasAnnouncedBody(req)) return Promise.resolve(NO_BODY);
  if (Number(req.headers['content-length'] ?? 0) > limit) return Promise.reject(payloadTooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        stop();
        req.pause();
        reject(payloadTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks, size));
    };
    const onGone = () => {
      stop();
      reject(new RequestAborted());
    };
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}

function payloadTooLarge(limit: number): HttpError {
  return new HttpError(413, 'PAYLOAD_TOO_LARGE', `Payload too large: request bodies are limited to ${limit} bytes`);
}

export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  return header.split(';', 1)[0]!.trim().toLowerCase() === 'application/json';
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The request body as a JSON object, by the rules of docs/contract.md §A1: without
 * the JSON content type the bytes are ignored and the body is `{}`, and an
 * empty body is `{}` too.
 */
export function parseJsonObject(req: IncomingMessage, raw: Buffer): Record<string, unknown> {
  if (!isJsonContentType(req.headers['content-type']) || raw.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(raw));
  } catch {
    throw new HttpError(400, 'INVALID_JSON', 'Invalid JSON: the request body is not valid UTF-8 JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HttpError(400, 'INVALID_REQUEST', 'Invalid request: the body must be a JSON object');
  }
  return value as Record<string, unknown>;
}

/** The path of a request target, without query; absolute-form targets (`http://host/path`) are reduced to their path. */
export function requestPath(url: string | undefined): string {
  // Origin-form (`/path?query`), what every client but a proxy sends, has no scheme and authority to strip.
  const target = url === undefined ? '' : url.charCodeAt(0) === SLASH ? url : url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  const query = target.indexOf('?');
  const fragment = target.indexOf('#');
  const end = query === -1 ? fragment : fragment === -1 ? query : Math.min(query, fragment);
  return end === -1 ? target : target.slice(0, end);
}

const SLASH = 0x2f;

/**
 * A complete HTTP/1.1 error response as raw text, for the moments node
 * hands us a socket rather than a response object (parse errors, CONNECT).
 * The connection is closed after it.
 */
export function rawErrorResponse(status: number, code: ErrorCode, message: string): string {
  const body = JSON.stringify({ error: message, code } satisfies ErrorBody);
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    'X-Content-Type-Options: nosniff',
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/** The query of a target without one, shared: nothing writes to a query. */
const NO_QUERY: Readonly<Record<string, string>> = Object.freeze({});

/** The query parameters of a request target; the last of a repeated name wins. */
export function requestQuery(url: string | undefined): Readonly<Record<string, string>> {
  const target = url ?? '';
  const start = target.indexOf('?');
  if (start === -1) return NO_QUERY;
  const end = target.indexOf('#', start);
  return Object.fromEntries(new URLSearchParams(target.slice(start + 1, end === -1 ? undefined : end)));
}
