import { API_PREFIX, apiPaths } from '../contract/paths.js';
import { isErrorBody } from '../contract/errors.js';
import { keyHint } from '../contract/key-format.js';
import type {
  CreateKeyRequest,
  KeyList,
  KeyRecord,
  RevokeResult,
  Workspace,
} from '../contract/types.js';
import { ApiError, NetworkError, RateLimitedError, TransportError, UnexpectedResponseError } from './errors.js';
import { header } from './headers.js';
import { nextStep, parseRetryAfter, type RetryPolicy } from './policy.js';
import type { HttpResponse, Transport } from './transport.js';

export interface WaitEvent {
  reason: 'rate-limit' | 'backoff';
  ms: number;
  /** What prompted the wait: the status, or the network failure. */
  cause: string;
}

export interface ClientOptions {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  policy: RetryPolicy;
  transport: Transport;
  userAgent: string;
  /** Sleeps for the event; the CLI's version shows a countdown on a TTY. */
  wait: (event: WaitEvent) => Promise<void>;
  /** Request log for `--verbose`; receives no secret. */
  log?: (line: string) => void;
  now?: () => number;
  random?: () => number;
}

export interface ApiResponse<T> {
  status: number;
  headers: HttpResponse['headers'];
  body: T;
  latencyMs: number;
  /** An earlier attempt may have reached the server and done the work; this answer reads in that light (CONTRACT §C4). */
  afterLostAnswer: boolean;
}

export interface RequestOptions {
  body?: unknown;
  timeoutMs?: number;
  /** Overrides the policy's retries after a network error or 5xx: 0 for a single look. */
  maxRetries?: number;
}

export class ApiClient {
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(private readonly options: ClientOptions) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  listKeys(opts: RequestOptions = {}): Promise<ApiResponse<KeyList>> {
    return this.request<KeyList>('GET', apiPaths.keys, opts);
  }

  async getKey(id: string): Promise<KeyRecord> {
    return (await this.request<KeyRecord>('GET', apiPaths.key(id))).body;
  }

  /**
   * The server's document as it came: the spec names none of its fields, so
   * the caller finds the secret in it (see findSecret) rather than trusting a shape.
   */
  createKey(body: CreateKeyRequest): Promise<ApiResponse<unknown>> {
    return this.request<unknown>('POST', apiPaths.keys, { body });
  }

  /**
   * `changed` is false when the key already had that state (204), unless an
   * earlier attempt may have made the change itself.
   */
  async setEnabled(id: string, enabled: boolean): Promise<{ changed: boolean; key: KeyRecord | null }> {
    const res = await this.request<KeyRecord | null>('PATCH', apiPaths.key(id), { body: { enabled } });
    return { changed: res.status !== 204 || res.afterLostAnswer, key: res.body };
  }

  /** A 404 after an attempt whose answer was lost is that attempt's success: the key is gone. */
  async revokeKey(id: string): Promise<RevokeResult> {
    try {
      return (await this.request<RevokeResult>('DELETE', apiPaths.key(id))).body;
    } catch (error) {
      if (error instanceof ApiError && error.status === 404 && error.afterLostAnswer) return { id, revoked: true };
      throw error;
    }
  }

  getWorkspace(): Promise<ApiResponse<Workspace>> {
    return this.request<Workspace>('GET', apiPaths.workspace);
  }

  /**
   * One call under the §C4 policies. A non-2xx final answer becomes an
   * ApiError, so callers deal only in success.
   */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    const { baseUrl, apiKey } = this.options;
    const policy = opts.maxRetries === undefined ? this.options.policy : { ...this.options.policy, maxRetries: opts.maxRetries };
    const url = baseUrl.replace(/\/+$/, '') + API_PREFIX + path;
    const headers: Record<string, string> = {
      authorization: `Bearer ${apiKey}`,
      accept: 'application/json',
      'user-agent': this.options.userAgent,
    };
    let payload: string | undefined;
    if (opts.body !== undefined) {
      payload = JSON.stringify(opts.body);
      headers['content-type'] = 'application/json';
    }
    const timeoutMs = opts.timeoutMs ?? this.options.timeoutMs;
    const state = { method, retries: 0, waitedSeconds: 0 };
    // Set once an attempt that may have reached the server is retried.
    let afterLostAnswer = false;
    const env = { nowMs: 0, random: this.random };

    for (let attempt = 1; ; attempt++) {
      this.options.log?.(`> ${method} ${url} (Authorization: Bearer ${keyHint(apiKey)})`);
      const started = performance.now();
      let res: HttpResponse | undefined;
      let failure: TransportError | undefined;
      try {
        res = await this.options.transport({ method, url, headers, body: payload, timeoutMs });
      } catch (error) {
        if (!(error instanceof TransportError)) throw error;
        failure = error;
      }
      const latencyMs = Math.round(performance.now() - started);
      this.options.log?.(res ? `< ${res.status} in ${latencyMs} ms` : `< ${failure!.message} after ${latencyMs} ms`);

      const parsed = res ? parseBody(res) : undefined;
      env.nowMs = this.now();
      const step = nextStep(
        res
          ? {
              kind: 'response',
              status: res.status,
              code: isErrorBody(parsed) ? parsed.code : undefined,
              retryAfter: header(res, 'retry-after'),
            }
          : { kind: 'network', reachedServerMaybe: failure!.reachedServerMaybe },
        state,
        policy,
        env,
      );

      switch (step.action) {
        case 'accept':
          return this.accept<T>(res!, parsed, method, path, latencyMs, afterLostAnswer);
        case 'wait-rate-limit':
          await this.options.wait({ reason: 'rate-limit', ms: step.seconds * 1000, cause: '429' });
          state.waitedSeconds += step.seconds;
          continue;
        case 'backoff':
          afterLostAnswer ||= res !== undefined || failure!.reachedServerMaybe;
          await this.options.wait({
            reason: 'backoff',
            ms: step.delayMs,
            cause: res ? String(res.status) : failure!.message,
          });
          state.retries++;
          continue;
        case 'give-up':
          if (step.reason === 'no-wait' || step.reason === 'wait-budget') {
            throw new RateLimitedError(
              parseRetryAfter(header(res!, 'retry-after'), env.nowMs),
              state.waitedSeconds,
              step.reason === 'no-wait' ? 'no-wait' : 'budget',
            );
          }
          if (res) throw new ApiError(res.status, isErrorBody(parsed) ? parsed : null, method, path, afterLostAnswer);
          throw new NetworkError(failure!.message, failure!.reachedServerMaybe, method, path, attempt);
      }
    }
  }

  private accept<T>(
    res: HttpResponse,
    parsed: unknown,
    method: string,
    path: string,
    latencyMs: number,
    afterLostAnswer: boolean,
  ): ApiResponse<T> {
    if (res.status < 200 || res.status >= 300) {
      throw new ApiError(res.status, isErrorBody(parsed) ? parsed : null, method, path, afterLostAnswer);
    }
    if (res.status !== 204 && parsed === undefined) {
      throw new UnexpectedResponseError(`${method} ${path} answered ${res.status} without a JSON body`, method, path, res.text);
    }
    return { status: res.status, headers: res.headers, body: (parsed ?? null) as T, latencyMs, afterLostAnswer };
  }
}

function parseBody(res: HttpResponse): unknown {
  if (res.text === '') return undefined;
  try {
    return JSON.parse(res.text);
  } catch {
    return undefined;
  }
}
