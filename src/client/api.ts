import { API_PREFIX, apiPaths } from '../contract/paths.js';
import type { ErrorBody } from '../contract/errors.js';
import { hintKeys, keyHint } from '../contract/key-format.js';
import type { CreateKeyRequest } from '../contract/types.js';
import { ApiError, IncompleteListError, NetworkError, RateLimitedError, TransportError, UnexpectedResponseError, type RequestOrigin } from './errors.js';
import { header } from './headers.js';
import { isObject, keyDocuments, readKey, type KeyView } from './key-view.js';
import { DrawnMarks } from './marks.js';
import { nextPage, PAGE_FIELDS, unfollowedMore } from './pagination.js';
import { nextStep, rateLimitSeconds, type RetryPolicy, type Step } from './policy.js';
import { RATE_LIMIT_HEADERS, SERVER_INSTANCE_HEADER } from '../contract/headers.js';
import type { HttpResponse, Transport } from './transport.js';

/** Why a request waits before its next attempt. */
export type RetryReason = 'rate-limit' | 'backoff';

export type WaitEvent =
  | {
      reason: RetryReason;
      ms: number;
      /** What prompted the wait: the status, or the network failure. */
      cause: string;
      /**
       * Stopping in this wait loses nothing: no attempt so far can have done
       * anything on the server (the request is a read, or every attempt of a
       * change was refused with a 429 or never reached it), and the request is
       * not one svc must finish (RequestOptions.finish).
       */
      stoppable: boolean;
    }
  | SettleWait;

/** A pause between two looks for the key a create whose answer was lost may have made (docs/contract.md §C4). */
export interface SettleWait {
  reason: 'settle';
  ms: number;
  /** The looks made so far. */
  looks: number;
  /** Until the create must have settled, from now: svc looks no longer than that. */
  settlesInMs: number;
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
  /**
   * When the whole command must be over, on `now`'s clock: every attempt's
   * timeout is cut to the time left, so retries cannot outlast it.
   */
  deadlineMs?: number;
  /**
   * When every wait must be over (the command's start plus `--max-wait`):
   * no rate-limit wait or backoff is begun that would end later, jitter and
   * the requests between waits counted as the wall clock counts them.
   */
  waitUntilMs?: number;
  now?: () => number;
  /**
   * The clock `deadlineMs` and `waitUntilMs` are on: `now`, less the time
   * the command spent waiting for a person (a question), which is not the
   * server's to answer in. `now` by default.
   */
  budgetNow?: () => number;
  random?: () => number;
  /** Which key and server, carried on every error this client throws so a report can name them. */
  origin: RequestOrigin;
}

export interface ApiResponse<T> {
  status: number;
  headers: HttpResponse['headers'];
  body: T;
  latencyMs: number;
  /** An earlier attempt may have reached the server and done the work; this answer reads in that light (docs/contract.md §C4). */
  afterLostAnswer: boolean;
}

export interface RequestOptions {
  body?: unknown;
  timeoutMs?: number;
  /** Overrides the policy's retries after a network error or 5xx: 0 for a single look. */
  maxRetries?: number;
  /** False: a 429 fails at once (RateLimitedError) instead of being slept through, whatever the policy says. */
  waitOnRateLimit?: false;
  /** Told as each attempt goes out and as each wait between attempts begins: what stopping at that moment would leave behind. What it throws ends the request. */
  onPhase?: (phase: RequestPhase) => void;
  /**
   * A request svc must see through whatever comes (the revoke of a key
   * nobody has the secret of): no wait of it is stoppable; the caller
   * answers the signals that come meanwhile.
   */
  finish?: true;
}

export type RequestPhase =
  | { state: 'out' }
  /** Before the next attempt; `afterLostAnswer`: an attempt so far may have reached the server and done the work (a 429 did not). */
  | { state: 'waiting'; reason: RetryReason; afterLostAnswer: boolean };

/** One attempt, no sleeping: a probe that must answer fast, whatever the server's state (status, completion). */
export const PROBE: RequestOptions = { maxRetries: 0, waitOnRateLimit: false };

/** Every key of the user, read page by page: what every caller that needs "the keys" gets. */
export interface KeyList {
  /** The records as they came, across every page. */
  documents: unknown[];
  keys: KeyView[];
  /** The first page's answer with every record in `keys` and no paging fields: the document `--json` prints. */
  body: Record<string, unknown>;
  pages: number;
  /** The server's clock when the last page came. */
  nowMs: number;
  /** Why the list may lack keys the server has (a sign of more svc cannot follow), or null when nothing says so. */
  incomplete: string | null;
}

/** One page as it came, handed to a caller that shows keys while the next page is read. */
export interface KeyPage {
  documents: unknown[];
  keys: KeyView[];
  /** The server's clock when the page came. */
  nowMs: number;
}

export interface ListOptions extends RequestOptions {
  onPage?: (page: KeyPage) => void;
}

/** More pages than any account has: a server whose pages never end is reported, not followed for ever. */
const MAX_PAGES = 10_000;

export class ApiClient {
  private readonly now: () => number;
  private readonly budgetNow: () => number;
  private readonly random: () => number;
  private clockOffsetMs = 0;
  private lastInstance: string | null = null;
  /** What this client drew for its creates, to tell their keys by when an answer is lost. */
  readonly marks = new DrawnMarks();

  constructor(private readonly options: ClientOptions) {
    this.now = options.now ?? Date.now;
    this.budgetNow = options.budgetNow ?? this.now;
    this.random = options.random ?? Math.random;
  }

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  /**
   * The same client sending another key: a probe with a key's own secret
   * tells whether that key still works, which no answer about it can.
   */
  withApiKey(apiKey: string): ApiClient {
    return new ApiClient({ ...this.options, apiKey, origin: { ...this.options.origin, keyHint: keyHint(apiKey) } });
  }

  /** The hint of the key this client sends (sk_…abcd), for telling which listed key is in use. */
  get keyHint(): string {
    return keyHint(this.options.apiKey);
  }

  get origin(): RequestOrigin {
    return this.options.origin;
  }

  /** The Svc-Server-Instance of the last answer (a reference server's run; docs/contract.md §B); null when it sent none. */
  get serverInstance(): string | null {
    return this.lastInstance;
  }

  /**
   * How long a wait of the caller's own may still last: until the command's
   * wait budget ends (the start plus --max-wait), 0 with --no-wait, as for
   * the client's own waits.
   */
  waitRoomMs(): number {
    if (this.noWait) return 0;
    return Math.max(0, (this.options.waitUntilMs ?? this.options.deadlineMs ?? Infinity) - this.budgetNow());
  }

  /** --no-wait was given: no wait is begun, the client's own or a caller's. */
  get noWait(): boolean {
    return !this.options.policy.waitOnRateLimit;
  }

  /** A wait of the caller's own, slept and shown as the client's own waits are; the caller keeps it within waitRoomMs. */
  pause(event: SettleWait): Promise<void> {
    return this.options.wait(event);
  }

  /** The first page of the key list, one request: whether a key works (ping, login), not what the keys are. */
  probeKeyList(opts: RequestOptions = {}): Promise<ApiResponse<unknown>> {
    return this.request<unknown>('GET', apiPaths.keys, opts);
  }

  /**
   * The one list reader (docs/contract.md §C6): every page, however the
   * server pages. A next page at another address, a page seen twice or no
   * end in sight is an error, never a list silently cut short.
   */
  async listAllKeys(opts: ListOptions = {}): Promise<KeyList> {
    const documents: unknown[] = [];
    const keys: KeyView[] = [];
    const seen = new Set<string>();
    const seenIds = new Set<string>();
    let repeated = 0;
    let first: Record<string, unknown> | undefined;
    let path: string = apiPaths.keys;
    for (let pages = 1; ; pages++) {
      seen.add(path);
      const res = await this.request<unknown>('GET', path, opts);
      // An answer without the list is not an empty list: read as one, it would pass for "no keys".
      if (!isObject(res.body) || !Array.isArray(res.body.keys)) throw this.cutShort(path, `its answer to ${path} holds no "keys" list`);
      const page = keyDocuments(res.body);
      const views = page.map(readKey);
      first ??= isObject(res.body) ? res.body : {};
      // A server that ignores the page svc asks for sends its first page again: every key of it already seen.
      const ids = views.map((k) => k.id).filter((id): id is string => id !== null);
      if (pages > 1 && ids.length > 0 && ids.every((id) => seenIds.has(id))) {
        throw this.cutShort(path, `its page ${pages} (${path}) holds only keys of earlier pages, as if it ignored the page asked for`);
      }
      // A key on two pages means the list moved under svc while it read (a key made or revoked
      // between pages of an offset list): shown once, and the list is not called complete.
      const pageDocuments: unknown[] = [];
      const pageKeys: KeyView[] = [];
      for (let i = 0; i < page.length; i++) {
        const id = views[i]!.id;
        if (id !== null && seenIds.has(id)) {
          repeated++;
          continue;
        }
        pageDocuments.push(page[i]);
        pageKeys.push(views[i]!);
      }
      // Two records with one id on the same page are the server's to explain: both are shown as they came.
      for (const id of ids) seenIds.add(id);
      // One by one: a spread of a page as large as 16 MiB allows would pass the engine's limit on arguments.
      for (let i = 0; i < pageDocuments.length; i++) {
        documents.push(pageDocuments[i]);
        keys.push(pageKeys[i]!);
      }
      opts.onPage?.({ documents: pageDocuments, keys: pageKeys, nowMs: this.serverNow() });
      // An empty page that names a next one is no end: a service may send one wherever its filter
      // skipped a whole page's worth (AIP-158). Repeats and MAX_PAGES below stop one that never ends.
      const next = nextPage(path, res.body, header(res, 'link'), this.options.baseUrl);
      if (next === null) {
        const body: Record<string, unknown> = { ...first, keys: documents };
        for (const field of PAGE_FIELDS) delete body[field];
        const incomplete =
          repeated > 0
            ? `${repeated === 1 ? 'a key' : `${repeated} keys`} came on two pages, so the list changed while svc read it and keys may have moved past unread; list again`
            : unfollowedMore(res.body, documents.length);
        return { documents, keys, body, pages, nowMs: this.serverNow(), incomplete };
      }
      const problem =
        'foreign' in next
          ? `its next page is at another address (${next.foreign}), where svc does not send the key`
          : seen.has(next.path)
            ? `its page ${pages + 1} is one it sent before (${next.path})`
            : pages >= MAX_PAGES
              ? `it still had more after ${MAX_PAGES} pages`
              : null;
      if (problem !== null) throw this.cutShort(path, problem);
      path = (next as { path: string }).path;
    }
  }

  private cutShort(path: string, problem: string): IncompleteListError {
    return new IncompleteListError(problem, path, this.origin);
  }

  /**
   * One key's record. The spec guarantees only the list, so where the server
   * does not offer `GET /user/api-keys/{id}` (see notOffered), the list
   * answers instead (docs/contract.md §C6); a key in neither is a 404.
   */
  async getKey(id: string): Promise<{ view: KeyView; document: unknown }> {
    try {
      const { body } = await this.request<unknown>('GET', apiPaths.key(id));
      return { view: readKey(body), document: body };
    } catch (error) {
      if (!notOffered(error)) throw error;
      const { documents } = await this.listAllKeys();
      const document = documents.find((doc) => readKey(doc).id === id);
      if (document !== undefined) return { view: readKey(document), document };
      // The service's own 404 keeps its words; anything else said only that the endpoint is not there.
      const serviceSaid = error instanceof ApiError && error.status === 404 && error.foreignBody === null;
      throw serviceSaid ? error : new ApiError(404, null, 'GET', apiPaths.key(id), { origin: this.origin });
    }
  }

  /**
   * The server's own document for a new key. The spec names none of its
   * fields, so the caller finds the secret in it (see findSecret) rather
   * than trusting a shape.
   */
  createKey(body: CreateKeyRequest, opts: RequestOptions = {}): Promise<ApiResponse<unknown>> {
    return this.request<unknown>('POST', apiPaths.keys, { ...opts, body });
  }

  /**
   * `changed` is false when the key already had that state (204), unless an
   * earlier attempt may have made the change itself.
   */
  async setEnabled(id: string, enabled: boolean, opts: Pick<RequestOptions, 'onPhase'> = {}): Promise<{ changed: boolean; document: unknown }> {
    const res = await this.request<unknown>('PATCH', apiPaths.key(id), { ...opts, body: { enabled } });
    return { changed: res.status !== 204 || res.afterLostAnswer, document: res.body };
  }

  /**
   * The server's answer. A 404 after an attempt whose answer was lost says
   * only that the key is gone: that attempt revoked it, or no such key ever
   * existed (`goneOnRetry`); which, the caller may know from a list.
   */
  async revokeKey(id: string, opts: Pick<RequestOptions, 'onPhase' | 'finish'> = {}): Promise<{ answer: unknown; goneOnRetry: boolean }> {
    try {
      return { answer: (await this.request<unknown>('DELETE', apiPaths.key(id), opts)).body ?? { id, revoked: true }, goneOnRetry: false };
    } catch (error) {
      if (error instanceof ApiError && error.status === 404 && error.afterLostAnswer) return { answer: { id, revoked: true }, goneOnRetry: true };
      throw error;
    }
  }

  /**
   * GET /workspace, or null where the server does not offer it (see
   * notOffered): the spec promises no such endpoint (docs/contract.md §C6).
   * Whether the address is the service's is for the list to tell.
   */
  async findWorkspace(opts: RequestOptions = {}): Promise<ApiResponse<unknown> | null> {
    try {
      return await this.request<unknown>('GET', apiPaths.workspace, opts);
    } catch (error) {
      if (notOffered(error)) return null;
      throw error;
    }
  }

  /**
   * The server's clock from one cheap request (any answer carries Date,
   * errors included); where none comes, ours. What failed here fails again,
   * and is reported, in the request that needed the time.
   */
  async readServerClock(): Promise<number> {
    await this.request('GET', apiPaths.workspace, { maxRetries: 0 }).catch(() => undefined);
    return this.serverNow();
  }

  /**
   * Now on the server's clock, as its last Date header told it (docs/contract.md
   * §C6): expiry and relative times are the server's business. A header
   * within the second it can express of our clock is taken to agree.
   */
  serverNow(): number {
    return this.now() + this.clockOffsetMs;
  }

  private observeDate(res: HttpResponse): number | null {
    const date = Date.parse(header(res, 'date') ?? '');
    if (!Number.isFinite(date)) return null;
    const offset = date - this.now();
    // Date has whole seconds: the server's now lies in [date, date + 1 s).
    this.clockOffsetMs = offset <= 0 && offset > -1_500 ? 0 : offset + 500;
    return date;
  }

  /**
   * One call under the §C4 policies. A non-2xx final answer becomes an
   * ApiError, so callers deal only in success.
   */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    const { baseUrl, apiKey } = this.options;
    const policy = {
      ...this.options.policy,
      ...(opts.maxRetries === undefined ? {} : { maxRetries: opts.maxRetries }),
      ...(opts.waitOnRateLimit === false ? { waitOnRateLimit: false } : {}),
    };
    const url = baseUrl.replace(/\/+$/, '') + API_PREFIX + path;
    const headers: Record<string, string> = {
      authorization: `Bearer ${apiKey}`,
      accept: 'application/json',
      'user-agent': this.options.userAgent,
    };
    // The Stripe convention: a server that keeps these answers a repeated create with the first one's
    // answer instead of a second key; one that does not ignores the header. One key for all attempts.
    if (method === 'POST') headers['idempotency-key'] = crypto.randomUUID();
    let payload: string | undefined;
    if (opts.body !== undefined) {
      payload = JSON.stringify(opts.body);
      headers['content-type'] = 'application/json';
    }
    const requestTimeoutMs = opts.timeoutMs ?? this.options.timeoutMs;
    const deadlineMs = this.options.deadlineMs ?? Infinity;
    const waitUntilMs = this.options.waitUntilMs ?? deadlineMs;
    const state = { method, retries: 0, waitedMs: 0 };
    // Set once an attempt that may have reached the server is retried.
    let afterLostAnswer = false;
    const stoppable = () => opts.finish !== true && (!afterLostAnswer || method === 'GET' || method === 'HEAD');
    const env = { nowMs: 0, random: this.random };

    for (let attempt = 1; ; attempt++) {
      this.options.log?.(`> ${method} ${url} (Authorization: Bearer ${keyHint(apiKey)})`);
      const timeoutMs = Math.max(1, Math.min(requestTimeoutMs, deadlineMs - this.budgetNow()));
      // hrtime, not performance.now(): the latter loads perf_hooks and seven more modules on every command.
      const started = process.hrtime.bigint();
      opts.onPhase?.({ state: 'out' });
      let res: HttpResponse | undefined;
      let failure: TransportError | undefined;
      try {
        res = await this.options.transport({ method, url, headers, body: payload, timeoutMs });
      } catch (error) {
        if (!(error instanceof TransportError)) throw error;
        failure = error;
      }
      const latencyMs = Math.round(Number(process.hrtime.bigint() - started) / 1e6);
      this.options.log?.(res ? `< ${res.status} in ${latencyMs} ms` : `< ${failure!.message} after ${latencyMs} ms`);

      const parsed = res ? readBody(res, method) : undefined;
      if (res) this.lastInstance = header(res, SERVER_INSTANCE_HEADER);
      // An HTTP-date Retry-After is read against the same response's Date.
      env.nowMs = (res && this.observeDate(res)) ?? this.now();
      const planned = nextStep(
        res
          ? {
              kind: 'response',
              status: res.status,
              code: readErrorBody(parsed).body?.code,
              retryAfter: header(res, 'retry-after'),
              rateLimitReset: header(res, RATE_LIMIT_HEADERS.reset),
            }
          : { kind: 'network', reachedServerMaybe: failure!.reachedServerMaybe, final: failure!.final },
        state,
        policy,
        env,
      );
      const step = this.withinDeadline(planned, waitUntilMs);

      switch (step.action) {
        case 'accept':
          return this.accept<T>(res!, parsed, method, path, latencyMs, afterLostAnswer);
        case 'wait-rate-limit': {
          opts.onPhase?.({ state: 'waiting', reason: 'rate-limit', afterLostAnswer });
          const waitStarted = this.now();
          await this.options.wait({ reason: 'rate-limit', ms: step.seconds * 1000 + step.jitterMs, cause: '429', stoppable: stoppable() });
          state.waitedMs += this.now() - waitStarted;
          continue;
        }
        case 'backoff':
          afterLostAnswer ||= res !== undefined || failure!.reachedServerMaybe;
          opts.onPhase?.({ state: 'waiting', reason: 'backoff', afterLostAnswer });
          await this.options.wait({
            reason: 'backoff',
            ms: step.delayMs,
            cause: res ? String(res.status) : failure!.message,
            stoppable: stoppable(),
          });
          state.retries++;
          continue;
        case 'give-up':
          if (step.reason === 'no-wait' || step.reason === 'wait-budget') {
            const seconds = rateLimitSeconds(header(res!, 'retry-after'), header(res!, RATE_LIMIT_HEADERS.reset), env.nowMs);
            throw new RateLimitedError(
              seconds,
              Math.round(state.waitedMs / 1000),
              step.reason === 'no-wait' ? 'no-wait' : 'budget',
              res!.headers,
              this.origin,
              readErrorBody(parsed).body?.code ?? null,
              this.now() + seconds * 1000,
            );
          }
          if (res) throw apiError(res, parsed, method, path, afterLostAnswer, this.origin, this.serverNow());
          throw new NetworkError(failure!.message, failure!.reachedServerMaybe, method, path, attempt, failure!.final, this.origin, failure!.refused);
      }
    }
  }

  /** A wait that would end past `waitUntilMs` is not taken: the command gives up now with what it has. */
  private withinDeadline(step: Step, waitUntilMs: number): Step {
    const waitMs = step.action === 'wait-rate-limit' ? step.seconds * 1000 + step.jitterMs : step.action === 'backoff' ? step.delayMs : 0;
    if (waitMs === 0 || this.budgetNow() + waitMs <= waitUntilMs) return step;
    return { action: 'give-up', reason: step.action === 'wait-rate-limit' ? 'wait-budget' : 'retries-exhausted' };
  }

  private accept<T>(
    res: HttpResponse,
    parsed: unknown,
    method: string,
    path: string,
    latencyMs: number,
    afterLostAnswer: boolean,
  ): ApiResponse<T> {
    if (res.status < 200 || res.status >= 300) throw apiError(res, parsed, method, path, afterLostAnswer, this.origin, this.serverNow());
    if (res.status !== 204 && parsed === undefined) {
      const garbled = /\bjson\b/i.test(header(res, 'content-type') ?? '') && res.text.trim() !== '';
      const what = garbled ? 'with JSON that does not parse' : 'without a JSON body';
      throw new UnexpectedResponseError(`${method} ${path} answered ${res.status} ${what}`, method, path, res.text, this.origin, garbled);
    }
    return { status: res.status, headers: res.headers, body: (parsed ?? null) as T, latencyMs, afterLostAnswer };
  }
}

/**
 * The answer of an endpoint beyond the spec (GET /workspace, GET
 * /user/api-keys/{id}) that says only that it is not available here: any
 * refusal below 500 but 401 and 429, which keep their meaning (a gateway's
 * 403, a framework's HTML 404, a 405), or a success that is not JSON. A
 * 5xx is a server failing, and is reported as one.
 */
function notOffered(error: unknown): boolean {
  if (error instanceof UnexpectedResponseError) return true;
  return error instanceof ApiError && error.status < 500 && error.status !== 401 && error.status !== 429;
}

function apiError(
  res: HttpResponse,
  parsed: unknown,
  method: string,
  path: string,
  afterLostAnswer: boolean,
  origin: RequestOrigin,
  serverNowMs: number,
): ApiError {
  const foreignBody = res.text.trim() !== '' && parsed === undefined ? (header(res, 'content-type') ?? 'no Content-Type') : null;
  const location = res.status >= 300 && res.status < 400 ? header(res, 'location') : null;
  const { body, details } = readErrorBody(parsed);
  const serverInstance = header(res, SERVER_INSTANCE_HEADER);
  return new ApiError(res.status, body, method, path, { afterLostAnswer, foreignBody, location, origin, details, serverInstance, serverNowMs, document: parsed });
}

/**
 * An error body as services write them: the message in `error` (a string, or
 * an object with `message`), `message`, `detail` or `title`; a `code`; and
 * what it adds in `details` or `errors` (strings, objects of a field and a
 * message, or a map of field to message), each made one string.
 */
function readErrorBody(parsed: unknown): { body: ErrorBody | null; details: string[] } {
  if (!isObject(parsed)) return { body: null, details: [] };
  const nested = isObject(parsed.error) ? parsed.error : null;
  const message = [parsed.error, nested?.message, parsed.message, parsed.detail, parsed.title].find((v): v is string => typeof v === 'string' && v !== '');
  const code = [parsed.code, nested?.code].find((v): v is string => typeof v === 'string' && v !== '');
  const details: string[] = [];
  for (const list of [parsed.details, parsed.errors, nested?.details]) {
    const items = Array.isArray(list) ? list : isObject(list) ? Object.entries(list).map(([field, text]) => ({ field, message: text })) : typeof list === 'string' ? [list] : [];
    for (const item of items) details.push(detailText(item));
  }
  if (message === undefined && code === undefined) return { body: null, details };
  return { body: { error: message ?? '', ...(code === undefined ? {} : { code }) }, details };
}

function detailText(item: unknown): string {
  if (typeof item === 'string') return item;
  if (!isObject(item)) return JSON.stringify(item) ?? String(item);
  const text = (v: unknown) => (typeof v === 'string' ? v : Array.isArray(v) ? v.join('.') : typeof v === 'number' ? String(v) : null);
  const field = text(item.field) ?? text(item.path) ?? text(item.loc) ?? text(item.param) ?? text(item.name);
  const message = text(item.message) ?? text(item.msg) ?? text(item.detail) ?? text(item.error) ?? text(item.reason);
  if (message === null) return JSON.stringify(item);
  return field === null ? message : `${field}: ${message}`;
}

/** JSON, after the byte order mark some servers put before it (RFC 8259 §8.1 lets a parser skip it). */
/**
 * The answer's JSON. Only a create's answer (a POST's success) may carry a
 * secret for the person to store; in any other a key (a name someone pasted
 * a secret into, a server echoing the Authorization header) is shown by its
 * hint, so that no listing, view or error prints it into a log.
 */
function readBody(res: HttpResponse, method: string): unknown {
  const body = parseBody(res);
  return method === 'POST' && res.status >= 200 && res.status < 300 ? body : keysHinted(body);
}

function keysHinted(value: unknown): unknown {
  if (typeof value === 'string') return hintKeys(value);
  if (Array.isArray(value)) return value.map(keysHinted);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([name, field]) => [name, keysHinted(field)]));
}

function parseBody(res: HttpResponse): unknown {
  const text = res.text.startsWith('\uFEFF') ? res.text.slice(1) : res.text;
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
