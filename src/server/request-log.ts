import { isoTime } from './clock.js';

/** One request as `GET /_local/requests` shows it: never a secret, only what the server knew of the key. */
export interface LoggedRequest {
  at: string;
  method: string;
  /** Without the query string, which is not the server's to keep. */
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
      out.push({ ...entry, at: isoTime(entry.at), ms: Math.round(entry.ms) });
    }
    return out;
  }

  clear(): void {
    this.ring.fill(undefined);
    this.next = 0;
    this.count = 0;
  }
}
