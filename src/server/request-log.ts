import { asciiDecoded, KEY_PREFIX } from '../contract/key-format.js';
import { isoTime } from './clock.js';

/** One request as `GET /_local/requests` shows it: never a secret, only what the server knew of the key. */
export interface LoggedRequest {
  at: string;
  method: string;
  /** Without the query string, which is not the server's to keep, and with any key-shaped segment redacted. */
  path: string;
  /** Null when no answer was sent: a reset connection, a hung request, a client that went away. */
  status: number | null;
  keyHint: string | null;
  workspaceId: string | null;
  ms: number;
  fault: string | null;
}

/** What app.ts knows of a request when it is over; `at` is the server clock's reading when it arrived, in ms. */
export type RequestRecord = Omit<LoggedRequest, 'at'> & { at: number };

export const REQUEST_LOG_SIZE = 1_000;

/**
 * The newest requests, in a ring of fixed size: recording one costs the same
 * whether the log is empty or full, and nothing is formatted until it is read.
 */
export class RequestLog {
  private readonly ring: (RequestRecord | undefined)[];
  private next = 0;
  private count = 0;

  constructor(private readonly size = REQUEST_LOG_SIZE) {
    this.ring = new Array<RequestRecord | undefined>(size);
  }

  record(entry: RequestRecord): void {
    this.ring[this.next] = entry;
    this.next = (this.next + 1) % this.size;
    this.count = Math.min(this.count + 1, this.size);
  }

  /** Newest first. */
  newest(limit: number): LoggedRequest[] {
    const out: LoggedRequest[] = [];
    for (let i = 1; i <= Math.min(limit, this.count); i++) {
      const entry = this.ring[(this.next - i + this.size) % this.size]!;
      out.push({ ...entry, path: redactedPath(entry.path), at: isoTime(entry.at), ms: Math.round(entry.ms) });
    }
    return out;
  }

  clear(): void {
    this.ring.fill(undefined);
    this.next = 0;
    this.count = 0;
  }
}

/** Where a key starts: `sk_` or `sk-` in any case and 8 characters of its alphabet, not the tail of a longer word. */
const KEY_START = /(?<![A-Za-z0-9])sk[_-][A-Za-z0-9]{8,}/i;

/** Half a key's body or more without its prefix; this server's ids and routes are far shorter. */
const BARE_KEY = /[A-Za-z0-9]{32,}/;

const WORD = /^[A-Za-z0-9]+$/;

const REDACTED = `${KEY_PREFIX}[redacted]`;

/**
 * The path with every segment that holds key material replaced: a script
 * that put a key where an id goes (`/user/api-keys/sk_…`) must not find it
 * in the log, however it was written. Segments are read as a server that
 * decodes again and again would read them (`%2573k_` is `sk_`); a key cut
 * by `/` goes on through the segments after its start that are all key
 * characters. A path with nothing to redact is kept as it came.
 */
export function redactedPath(path: string): string {
  let found = false;
  let inKey = false;
  const segments = asciiDecoded(path)
    .split('/')
    .map((segment) => {
      inKey = KEY_START.test(segment) || BARE_KEY.test(segment) || (inKey && WORD.test(segment));
      found ||= inKey;
      return inKey ? REDACTED : segment;
    });
  return found ? segments.join('/') : path;
}
