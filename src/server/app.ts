import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { UNAUTHORIZED_MESSAGE, type ErrorBody } from '../contract/errors.js';
import { RATE_LIMIT_HEADERS, SERVER_INSTANCE_HEADER } from '../contract/headers.js';
import { API_PREFIX, LOCAL_PREFIX } from '../contract/paths.js';
import { RATE_WINDOW_SECONDS, REQUESTS_PER_MINUTE, type Plan } from '../contract/plans.js';
import type { LocalServerReady } from '../contract/types.js';
import { adminRouter } from './admin.js';
import { apiRouter } from './api.js';
import { authenticateKey, isAdminToken } from './auth.js';
import type { Clock } from './clock.js';
import type { FaultPlan, FaultTable } from './faults.js';
import {
  asciiJson,
  hasAnnouncedBody,
  hasUnreadBody,
  HttpError,
  JsonText,
  parseJsonObject,
  readBody,
  RequestAborted,
  requestPath,
  requestQuery,
  send,
  type HeaderList,
  type Reply,
} from './http.js';
import type { LateChanges } from './late-changes.js';
import type { FixedWindowLimiter, RateDecision } from './limiter.js';
import { LockLostError, StateFileError } from './persistence.js';
import type { RequestLog } from './request-log.js';
import type { Match } from './router.js';
import type { Store, StoredKey, WorkspaceState } from './store.js';

export interface AppDeps {
  store: Store;
  clock: Clock;
  limiter: FixedWindowLimiter;
  /** Resolves once every change made so far is durable; rejects with a StateFileError when they could not be saved and were undone. */
  save: () => Promise<void>;
  /** Settles once the changes made so far are durable, saving nothing itself; rejects like save. */
  whenDurable: () => Promise<void>;
  adminToken: string;
  faults: FaultTable;
  requestLog: RequestLog;
  /** Makes the world new (docs/contract.md §B `/_local/reset`), saved like any change, and answers the ready document. */
  reset: () => Promise<LocalServerReady>;
  /** Keeps a request unanswered for good (a `hang` fault) until the client gives up or the server stops. */
  hang: (req: IncomingMessage) => void;
  /** Where a fault holds back a change (`landsAfterMs`) until the server's clock reaches its time. */
  lateChanges: LateChanges;
  /** True once shutdown began: responses then close their connection instead of keeping it alive. */
  isClosing: () => boolean;
  /** Where unexpected errors go, stack included; clients only ever see a plain 500. */
  logError: (error: unknown) => void;
  /** Keys in a page of the list (docs/contract.md §A5), unless `--page-size` said otherwise. */
  pageSize?: number;
  /** This run's Svc-Server-Instance (listen.ts), fixed for the server's life. */
  instance: string;
}

const BODY_METHODS = new Set(['POST', 'PATCH', 'PUT']);

const INTERNAL_ERROR: Reply = { status: 500, body: { error: 'Internal server error', code: 'INTERNAL' } };
const UNAVAILABLE: Reply = {
  status: 503,
  body: { error: 'Service unavailable: the change could not be saved, so it was not made; try again later', code: 'UNAVAILABLE' },
};
/** Trying again does not help here: this server will not save again, whoever now holds its file. */
const LOCK_LOST: Reply = {
  status: 503,
  body: {
    error:
      'Service unavailable: this server lost the lock on its data file, so the change was not made; it makes no more changes ' +
      '(reads go on) until it is restarted',
    code: 'UNAVAILABLE',
  },
};

/** A request the fault layer answered by dropping it: reset, or left hanging. */
const DROPPED = Symbol('dropped');
type Outcome = Reply | typeof DROPPED;

/** What a request under /api/service met as it passed each layer: what the log keeps, and what sets the rate-limit headers. */
interface Seen {
  key: StoredKey | null;
  fault: string | null;
  /** The limiter's count, once it counted the request; null again when a fault replaced the answer. */
  decision: RateDecision | null;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function unauthorized(): HttpError {
  return new HttpError(401, 'UNAUTHORIZED', UNAUTHORIZED_MESSAGE, { 'www-authenticate': 'Bearer' });
}

/**
 * The one answer to every failed authentication (docs/contract.md §A2), made and written once; nothing
 * changes a reply once made. A script guessing keys makes this the busiest answer of all.
 */
const UNAUTHORIZED: Reply = writtenOnce(unauthorized().toReply());

/**
 * The request handler. Checks run in the order of docs/contract.md §A2:
 * authentication, rate limit, routing, body, handler; each step answers
 * with its own error and the later ones never run. Injected faults
 * (docs/contract.md §B) come between authentication and the rate limit.
 */
export function createApp(deps: AppDeps): RequestListener {
  const { store, clock, limiter, save, whenDurable, adminToken, faults, requestLog } = deps;
  const api = apiRouter({ store, now: () => clock.now(), save, whenDurable, pageSize: deps.pageSize });
  const admin = adminRouter({ store, clock, save, faults, requestLog, lateChanges: deps.lateChanges, reset: deps.reset });
  const refusals = new Refusals();

  /**
   * docs/contract.md §B: faults apply after authentication and before the
   * rate limiter counts. A delayed request's body is read while it waits, so
   * a client that gives up during the delay still had its request handled.
   */
  function serveApi(req: IncomingMessage, path: string, seen: Seen): Outcome | Promise<Outcome> {
    const key = authenticateKey(store, req);
    // Returned, not thrown: every refused guess would otherwise pay for an Error and the unwinding.
    if (!key) return UNAUTHORIZED;
    seen.key = key;
    const plan = faults.take(req.method ?? '', path);
    if (!plan) return admitted(req, path, seen, key);
    seen.fault = plan.fault;
    return withFault(req, path, seen, key, plan);
  }

  async function withFault(req: IncomingMessage, path: string, seen: Seen, key: StoredKey, plan: FaultPlan): Promise<Outcome> {
    let raw: Promise<Buffer> | undefined;
    if (plan.delayMs > 0) {
      raw = readBody(req);
      raw.catch(() => {});
      await sleep(plan.delayMs);
    }
    if (plan.landsAfterMs !== null) return landingLate(req, path, seen, key, plan, raw ?? readBody(req));
    if (!plan.after) return plan.then === 'answer' ? admitted(req, path, seen, key, raw) : faulted(req, plan, seen);
    // The change is made and saved (the handler answers only once it is durable); then its answer is lost.
    let real: Reply;
    try {
      real = await admitted(req, path, seen, key, raw);
    } catch (error) {
      real = errorReply(error);
    }
    return plan.then === 'answer' ? real : faulted(req, plan, seen);
  }

  /**
   * The fault's answer now, the change later: what a client meets behind a
   * gateway that answered 504 while its upstream was still working. The body
   * is read whole first (the client sent it before the answer came); the
   * change is then handled as if the request arrived when it lands, and its
   * own answer goes nowhere.
   */
  async function landingLate(req: IncomingMessage, path: string, seen: Seen, key: StoredKey, plan: FaultPlan, raw: Promise<Buffer>): Promise<Outcome> {
    await raw;
    // Its own, not the request's: what the late handler meets is logged nowhere, and sets no header of the answer already sent.
    const landed: Seen = { key, fault: plan.fault, decision: null };
    deps.lateChanges.hold(clock.now() + plan.landsAfterMs!, async () => {
      try {
        await admitted(req, path, landed, key, raw);
      } catch (error) {
        // What the handler refused (its key revoked meanwhile, a failed save) is the late change not made, as upstream.
        if (!(error instanceof RequestAborted)) errorReply(error);
      }
    });
    return faulted(req, plan, seen);
  }

  /**
   * Synchronous up to the handler when there is no body to wait for, as on every GET: a request
   * refused by the limiter, or answered from memory, costs no promise and no trip through the
   * microtask queue (bench/throughput.mjs).
   */
  function admitted(req: IncomingMessage, path: string, seen: Seen, key: StoredKey, raw?: Promise<Buffer>): Reply | Promise<Reply> {
    stillHeld(key);
    const workspace = store.workspace(key.workspaceId)!;
    const decision = limiter.check(workspace.id, REQUESTS_PER_MINUTE[workspace.plan]);
    seen.decision = decision;
    // An answer, not a thrown HttpError: a client hammering an exhausted workspace makes this the busiest path.
    if (!decision.allowed) return refusals.reply(workspace, decision);
    const { handler, params } = routed(api.match(req.method ?? '', path));
    const call = (body: Record<string, unknown>) => handler({ key, user: store.user(key.userId)!, params, query: requestQuery(req.url), body });
    // Without a body, every method's is `{}` (docs/contract.md §A1), and there is nothing to wait for.
    if (raw === undefined && !hasAnnouncedBody(req)) return call({});
    return requestBody(req, raw).then((body) => {
      stillHeld(key);
      return call(body);
    });
  }

  /**
   * A request is authenticated on arrival, but its body and an injected delay are waited for: by then
   * a reset may have taken its user and workspace away, or a revoke its key. It is answered as it
   * would be had it come a moment later, not handled for a world that is gone.
   */
  function stillHeld(key: StoredKey): void {
    if (!store.holds(key)) throw unauthorized();
  }

  /** The fault's own answer, or none: a replaced answer carries nothing of the real one, rate-limit headers included. */
  function faulted(req: IncomingMessage, plan: FaultPlan, seen: Seen): Outcome {
    seen.decision = null;
    if (plan.then === 'reset') {
      req.socket.resetAndDestroy();
      return DROPPED;
    }
    if (plan.then === 'hang') {
      deps.hang(req);
      return DROPPED;
    }
    return plan.reply!;
  }

  async function serveAdmin(req: IncomingMessage, path: string): Promise<Reply> {
    if (!isAdminToken(req, adminToken)) throw unauthorized();
    const { handler, params } = routed(admin.match(req.method ?? '', path));
    return handler({ params, query: requestQuery(req.url), body: await requestBody(req) });
  }

  function errorReply(error: unknown): Reply {
    if (error instanceof RequestAborted) throw error;
    if (error instanceof HttpError) return error.toReply();
    // The state file (or, for the lock, the server) reported the cause to the operator; memory is back to what the file holds.
    if (error instanceof LockLostError) return LOCK_LOST;
    if (error instanceof StateFileError) return UNAVAILABLE;
    deps.logError(error);
    return INTERNAL_ERROR;
  }

  return (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    const at = clock.now();
    const path = requestPath(req.url);
    const local = isUnder(path, LOCAL_PREFIX);
    const seen: Seen = { key: null, fault: null, decision: null };
    // The admin area is the harness, not the traffic under test: only other requests are logged.
    const log = (status: number | null) => {
      if (local) return;
      requestLog.record({
        at,
        method: req.method ?? '',
        path,
        status,
        keyHint: seen.key?.hint ?? null,
        workspaceId: seen.key?.workspaceId ?? null,
        ms: performance.now() - started,
        fault: seen.fault,
      });
    };
    const answer = (reply: Outcome) => {
      if (reply === DROPPED) {
        log(null);
        return;
      }
      // Headers every answer to this request carries, whatever it turns out to be. Date is the server's clock
      // as it answers, not as the request came: after a delay or a slow save the arrival time would put the
      // client's reading of the server's clock behind by that long (docs/contract.md §B).
      const date = clock.httpDate();
      const headers: HeaderList =
        seen.decision === null ? ['date', date, SERVER_INSTANCE_HEADER, deps.instance] : rateLimitHeaders(seen.decision, date, deps.instance);
      // An unread body must not be drained (it may be huge), so the connection cannot be reused.
      send(res, reply, deps.isClosing() || hasUnreadBody(req), headers);
      log(res.headersSent ? reply.status : null);
    };
    const fail = (error: unknown) => {
      if (error instanceof RequestAborted) log(null);
      else answer(errorReply(error));
    };
    const crash = (error: unknown) => {
      deps.logError(error);
      res.destroy();
    };
    try {
      let outcome: Outcome | Promise<Outcome>;
      try {
        if (isUnder(path, API_PREFIX)) outcome = serveApi(req, path.slice(API_PREFIX.length), seen);
        else if (local) outcome = serveAdmin(req, path.slice(LOCAL_PREFIX.length));
        else throw new HttpError(404, 'NOT_FOUND', `Not found: the API lives under ${API_PREFIX}/`);
      } catch (error) {
        fail(error);
        return;
      }
      if (outcome instanceof Promise) outcome.then(answer, fail).catch(crash);
      else answer(outcome);
    } catch (error) {
      crash(error);
    }
  };
}

/**
 * The 429 of the workspace refused last, written once and answered again while nothing in it
 * changes: a client hammering an exhausted workspace gets the same answer for up to a second
 * (retry-after counts whole seconds), and building and serialising it again was most of the 429's cost.
 */
class Refusals {
  private last: { workspaceId: string; plan: Plan; limit: number; resetSeconds: number; reply: Reply } | null = null;

  reply(workspace: WorkspaceState, decision: RateDecision): Reply {
    const { last } = this;
    const { limit, resetSeconds } = decision;
    if (last && last.workspaceId === workspace.id && last.plan === workspace.plan && last.limit === limit && last.resetSeconds === resetSeconds) {
      return last.reply;
    }
    const body: ErrorBody = {
      error: `Rate limit exceeded: ${limit} requests per minute for workspace ${workspace.id} (plan ${workspace.plan}); retry in ${resetSeconds} s`,
      code: 'RATE_LIMITED',
    };
    const reply = writtenOnce({ status: 429, body, headers: { 'retry-after': resetSeconds } });
    this.last = { workspaceId: workspace.id, plan: workspace.plan, limit, resetSeconds, reply };
    return reply;
  }
}

function writtenOnce(reply: Reply): Reply {
  return { ...reply, body: new JsonText(asciiJson(reply.body)) };
}

function isUnder(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

function routed<H>(match: Match<H>): { handler: H; params: Record<string, string> } {
  if (match.kind === 'not-found') throw new HttpError(404, 'NOT_FOUND', 'Not found: no such endpoint');
  if (match.kind === 'method-not-allowed') {
    throw new HttpError(405, 'METHOD_NOT_ALLOWED', `Method not allowed: use ${match.allow}`, { allow: match.allow });
  }
  return match;
}

/** Bodies are read (and held to the size limit) for every method, but only POST, PATCH and PUT use theirs. */
async function requestBody(req: IncomingMessage, raw: Promise<Buffer> = readBody(req)): Promise<Record<string, unknown>> {
  const bytes = await raw;
  return BODY_METHODS.has(req.method ?? '') ? parseJsonObject(req, bytes) : {};
}

/** The rate-limit headers, then Date and the instance, in one list made at its full length. */
function rateLimitHeaders(decision: RateDecision, date: string, instance: string): HeaderList {
  return [
    RATE_LIMIT_HEADERS.limit,
    decision.limit,
    RATE_LIMIT_HEADERS.remaining,
    decision.remaining,
    RATE_LIMIT_HEADERS.reset,
    decision.resetSeconds,
    RATE_LIMIT_HEADERS.policy,
    policyOf(decision.limit),
    'date',
    date,
    SERVER_INSTANCE_HEADER,
    instance,
  ];
}

/** The policy header of each ceiling, written once: there are as many as plans. */
const policies = new Map<number, string>();

function policyOf(limit: number): string {
  let policy = policies.get(limit);
  if (policy === undefined) {
    policy = `${limit};w=${RATE_WINDOW_SECONDS}`;
    policies.set(limit, policy);
  }
  return policy;
}
