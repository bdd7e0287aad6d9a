import { KEY_PREFIX } from '../contract/key-format.js';
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

/** `sk_` and at least 8 symbols of a key's alphabet: long enough that no hint, id or route is taken for a key. */
const KEY_LIKE = new RegExp(`${KEY_PREFIX}[A-Za-z0-9]{8,}`);

/**
 * The path with every segment that holds a key, plain or percent-encoded,
 * replaced: a script that put its key where an id goes (`/user/api-keys/sk_…`)
 * must not find it in the log.
 */
export function redactedPath(path: string): string {
  if (!path.includes('%') && !KEY_LIKE.test(path)) return path;
  return path
    .split('/')
    .map((segment) => (KEY_LIKE.test(decoded(segment)) ? `${KEY_PREFIX}[redacted]` : segment))
    .join('/');
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
