/**
 * The built `svc serve --local` as a child process, and raw TCP exchanges
 * with it: abuse tests attack the server as shipped, and a crash shows as
 * the process exiting, an unexpected error as a line on its stderr.
 */
import { connect } from 'node:net';
import { cleanEnv } from '../helpers/env.js';
import { serveProcess, type ServeProcess as Spawned } from '../helpers/reference-server.mjs';

export { call, type Answer } from '../helpers/reference-server.mjs';
export const ADMIN_TOKEN = 'abuse-admin-token';

/** The bootstrap key is there: these tests start from an empty state, or say otherwise. */
export interface ServeProcess extends Spawned {
  apiKey: string;
}

/** The built server with a known admin token. */
export async function startServe(args: string[] = []): Promise<ServeProcess> {
  const server = await serveProcess(['--admin-token', ADMIN_TOKEN, ...args], { env: cleanEnv() });
  return { ...server, apiKey: server.apiKey! };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * Sends `bytes` on a fresh connection, half-closes it (so the server sees
 * the end of whatever it was sent; `halfClose: false` keeps it open) and
 * collects everything until the server hangs up. Rejects if the server
 * neither answers nor hangs up within `timeoutMs`: that would be a
 * connection left hanging.
 */
export function exchange(port: number, bytes: Buffer | string, timeoutMs = 5_000, { halfClose = true } = {}): Promise<Buffer> {
  return new Promise((done, fail) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      fail(new Error(`no hang-up within ${timeoutMs} ms; received ${JSON.stringify(Buffer.concat(chunks).toString('latin1'))}`));
    }, timeoutMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    // A reset after the server answered and closed is fine; what arrived is judged either way.
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      done(Buffer.concat(chunks));
    });
    if (halfClose) socket.end(bytes);
    else socket.write(bytes);
  });
}

/**
 * Every response in a byte stream, in order. Throws when the bytes are not
 * a sequence of well-framed HTTP/1.1 responses (Content-Length framing, or
 * no body for 204 and for an answer to HEAD), which is itself a failure.
 */
export function parseResponses(bytes: Buffer, { head = false } = {}): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest = bytes;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) throw new Error(`truncated response head: ${JSON.stringify(rest.toString('latin1'))}`);
    const [statusLine, ...lines] = rest.subarray(0, end).toString('latin1').split('\r\n');
    const match = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine!);
    if (!match) throw new Error(`not a status line: ${JSON.stringify(statusLine)}`);
    const status = Number(match[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const start = end + 4;
    if (status < 200) {
      // An interim answer (100 Continue) has no body and is followed by the real one.
      rest = rest.subarray(start);
      continue;
    }
    // A HEAD answer announces the length of a body it does not carry. Only the first final answer can be
    // the HEAD's own; it may instead be an error answer for bytes the server could not parse, which does
    // carry its body, but that one says Connection: close and nothing may follow it.
    const headAnswer = head && responses.length === 0 && (rest.length === start || headers.connection !== 'close');
    const bodyless = status === 204 || headAnswer;
    const length = bodyless ? 0 : Number(headers['content-length']);
    if (!Number.isInteger(length)) throw new Error(`response ${status} without Content-Length`);
    if (rest.length < start + length) throw new Error(`truncated body of a ${status} response`);
    responses.push({ status, headers, body: rest.subarray(start, start + length) });
    rest = rest.subarray(start + length);
  }
  return responses;
}

/** The promises every answer keeps: never a 5xx, a JSON body unless 204 (or HEAD), never a stack trace. */
export function jsonProblems(response: RawResponse, { head = false } = {}): string[] {
  const problems: string[] = [];
  if (response.status >= 500) problems.push(`status ${response.status}`);
  if (response.status === 204 || (head && response.body.length === 0)) return problems;
  if (!/^application\/json(;|$)/.test(response.headers['content-type'] ?? '')) {
    problems.push(`content-type ${JSON.stringify(response.headers['content-type'])}`);
  }
  const text = response.body.toString('utf8');
  try {
    JSON.parse(text);
  } catch {
    problems.push(`body is not JSON: ${JSON.stringify(text.slice(0, 200))}`);
  }
  if (/\n\s+at /.test(text)) problems.push('body carries a stack trace');
  return problems;
}
