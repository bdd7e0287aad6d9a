import type { ErrorBody } from '../contract/errors.js';

/** Where the key came from; `login` is a key being checked before it is saved. */
export type KeySource = 'env' | 'profile' | 'login';
/** Where the base URL came from: --base-url, SVC_BASE_URL, the profile, or svc's default. */
export type BaseUrlSource = 'flag' | 'env' | 'profile' | 'default';

/**
 * Which key went to which server, for whom: what a failure report names
 * (docs/contract.md §C4). The client carries it on every error it throws and
 * reads nothing in it.
 */
export interface RequestOrigin {
  baseUrl: string;
  baseUrlSource: BaseUrlSource;
  /** The server the profile is saved for, when --base-url or SVC_BASE_URL sent the request elsewhere. */
  overriddenBaseUrl: string | null;
  keyHint: string;
  keySource: KeySource;
  profile: string;
  /** The project's `.svc-profile` that chose the profile, when one did: a 401 names it. */
  profileFile?: string | null;
  /** The Svc-Server-Instance the profile recorded when its key was saved (docs/contract.md §B); null when none was, or the key is not the profile's. */
  savedInstance?: string | null;
  /** When the profile's key expires, by the expiry its profile recorded (keyExpiry): a 401 that comes after it, on the server's clock, names it. */
  savedKeyExpiresAt?: string | null;
}

/** What an answer said beyond its status and error body. */
export interface ApiErrorDetails {
  /** An earlier attempt of this request may have reached the server and done its work (docs/contract.md §C4). */
  afterLostAnswer?: boolean;
  /** The Content-Type of an answer whose body was not JSON (an HTML error page, say). */
  foreignBody?: string | null;
  /** Where a redirect pointed; svc never follows one (docs/contract.md §C4). */
  location?: string | null;
  origin?: RequestOrigin | null;
  /** What the error body said beyond its message (`details`, `errors`), one string each, as it came. */
  details?: readonly string[];
  /** The answer's Svc-Server-Instance: which run of a reference server answered. */
  serverInstance?: string | null;
  /** Now on the server's clock as the answer came (its Date header; ours where it had none). */
  serverNowMs?: number | null;
  /** The answer's JSON as it came (keys in it shown by their hints); undefined when it had none. */
  document?: unknown;
}

/** The server answered with a status the caller did not ask to handle. */
export class ApiError extends Error {
  readonly afterLostAnswer: boolean;
  readonly foreignBody: string | null;
  readonly location: string | null;
  readonly origin: RequestOrigin | null;
  readonly details: readonly string[];
  readonly serverInstance: string | null;
  readonly serverNowMs: number | null;
  readonly document: unknown;

  constructor(
    readonly status: number,
    readonly body: ErrorBody | null,
    readonly method: string,
    readonly path: string,
    details: ApiErrorDetails = {},
  ) {
    super(body?.error || `HTTP ${status}`);
    this.name = 'ApiError';
    this.afterLostAnswer = details.afterLostAnswer ?? false;
    this.foreignBody = details.foreignBody ?? null;
    this.location = details.location ?? null;
    this.origin = details.origin ?? null;
    this.details = details.details ?? [];
    this.serverInstance = details.serverInstance ?? null;
    this.serverNowMs = details.serverNowMs ?? null;
    this.document = details.document;
  }

  get code(): string | undefined {
    return this.body?.code;
  }
}

/** A 429 RATE_LIMITED the policy chose not to (or could no longer) wait out. */
export class RateLimitedError extends Error {
  constructor(
    readonly retryAfterSeconds: number,
    readonly waitedSeconds: number,
    readonly reason: 'no-wait' | 'budget',
    /** The 429's headers: what a status reads the limit and its reset from. */
    readonly headers: Record<string, string | string[] | undefined> = {},
    readonly origin: RequestOrigin | null = null,
    /** The 429's error code (RATE_LIMITED, or none: the spec makes it optional). */
    readonly code: string | null = null,
    /** When the window reopens on this machine's clock: when svc gave up, plus `retryAfterSeconds`. */
    readonly retryAtMs: number | null = null,
  ) {
    super('Rate limit exceeded');
    this.name = 'RateLimitedError';
  }
}

/** No usable answer: refused, reset, timed out, or not HTTP/JSON at all. */
export class NetworkError extends Error {
  constructor(
    message: string,
    /** False only when the request certainly never reached the server. */
    readonly mayHaveReachedServer: boolean,
    readonly method: string,
    readonly path: string,
    readonly attempts: number,
    /** Not retried: trying again cannot help, and the message names the fix. */
    readonly final = false,
    readonly origin: RequestOrigin | null = null,
    /** The server's machine refused the connection: nothing listens on that port. */
    readonly refused = false,
  ) {
    super(message);
    this.name = 'NetworkError';
  }
}

/** A 2xx whose body is not the JSON the contract promises. */
export class UnexpectedResponseError extends Error {
  constructor(
    message: string,
    readonly method: string,
    readonly path: string,
    /** The body as received, which may still hold something the caller must not lose (a new key's secret). */
    readonly text: string,
    readonly origin: RequestOrigin | null = null,
    /** The answer said it was JSON and did not parse: the service's, cut short or garbled on its way, not another server's. */
    readonly garbled = false,
  ) {
    super(message);
    this.name = 'UnexpectedResponseError';
  }
}

/** The key list's pages could not all be read: svc stops rather than act on part of a list (docs/contract.md §C6). */
export class IncompleteListError extends UnexpectedResponseError {
  constructor(problem: string, path: string, origin: RequestOrigin | null) {
    super(`The key list could not be read whole: ${problem}`, 'GET', path, '', origin);
    this.name = 'IncompleteListError';
  }
}

/** The request failed below HTTP. */
export class TransportError extends Error {
  constructor(
    message: string,
    /** False only when no byte of the request can have reached the server. */
    readonly reachedServerMaybe: boolean,
    /** Trying again cannot help: a certificate not trusted, a host that does not exist, an answer too large (docs/contract.md §C4). */
    readonly final = false,
    /** The server's machine refused the connection (ECONNREFUSED): nothing listens on that port. */
    readonly refused = false,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}
