import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { UNAUTHORIZED_MESSAGE } from '../contract/errors.js';
import { RATE_LIMIT_HEADERS } from '../contract/headers.js';
import { API_PREFIX, LOCAL_PREFIX } from '../contract/paths.js';
import { RATE_WINDOW_SECONDS, REQUESTS_PER_MINUTE } from '../contract/plans.js';
import { adminRouter } from './admin.js';
import { apiRouter } from './api.js';
import { authenticateKey, isAdminToken } from './auth.js';
import type { Clock } from './clock.js';
import {
  hasUnreadBody,
  HttpError,
  parseJsonObject,
  readBody,
  RequestAborted,
  requestPath,
  send,
  type Headers,
  type Reply,
} from './http.js';
import type { FixedWindowLimiter, RateDecision } from './limiter.js';
import { StateFileError } from './persistence.js';
import type { Match } from './router.js';
import type { Store } from './store.js';

export interface AppDeps {
  store: Store;
  clock: Clock;
  limiter: FixedWindowLimiter;
  /** Resolves once every change made so far is durable; rejects with a StateFileError when they could not be saved and were undone. */
  save: () => Promise<void>;
  /** Settles once the changes made so far are durable, saving nothing itself; rejects like save. */
  whenDurable: () => Promise<void>;
  adminToken: string;
  /** True once shutdown began: responses then close their connection instead of keeping it alive. */
  isClosing: () => boolean;
  /** Where unexpected errors go, stack included; clients only ever see a plain 500. */
  logError: (error: unknown) => void;
}

const BODY_METHODS = new Set(['POST', 'PATCH', 'PUT']);

const INTERNAL_ERROR: Reply = { status: 500, body: { error: 'Internal server error', code: 'INTERNAL' } };
const UNAVAILABLE: Reply = {
  status: 503,
  body: { error: 'Service unavailable: the change could not be saved, so it was not made; try again later', code: 'UNAVAILABLE' },
};

function unauthorized(): HttpError {
  return new HttpError(401, 'UNAUTHORIZED', UNAUTHORIZED_MESSAGE, { 'www-authenticate': 'Bearer' });
}

/**
 * The request handler. Checks run in the order of docs/contract.md §A2:
 * authentication, rate limit, routing, body, handler; each step answers
 * with its own error and the later ones never run.
 */
export function createApp(deps: AppDeps): RequestListener {
  const { store, clock, limiter, save, whenDurable, adminToken } = deps;
  const api = apiRouter({ store, now: () => clock.now(), save, whenDurable });
  const admin = adminRouter({ store, clock, save });

  async function serveApi(req: IncomingMessage, path: string, headers: Headers): Promise<Reply> {
    const key = authenticateKey(store, req);
    if (!key) throw unauthorized();
    const workspace = store.workspace(key.workspaceId)!;
    const decision = limiter.check(workspace.id, REQUESTS_PER_MINUTE[workspace.plan]);
    Object.assign(headers, rateLimitHeaders(decision));
    if (!decision.allowed) {
      throw new HttpError(
        429,
        'RATE_LIMITED',
        `Rate limit exceeded: ${decision.limit} requests per minute for workspace ${workspace.id} (plan ${workspace.plan}); retry in ${decision.resetSeconds} s`,
        { 'retry-after': decision.resetSeconds },
      );
    }
    const { handler, params } = routed(api.match(req.method ?? '', path));
    const body = await requestBody(req);
    return handler({ key, user: store.user(key.userId)!, params, body });
  }

  async function serveAdmin(req: IncomingMessage, path: string): Promise<Reply> {
    if (!isAdminToken(req, adminToken)) throw unauthorized();
    const { handler, params } = routed(admin.match(req.method ?? '', path));
    return handler({ params, body: await requestBody(req) });
  }

  return (req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const path = requestPath(req.url);
      // Headers every answer to this request carries, whatever it turns out to be: the server's clock, rate-limit headers.
      const headers: Headers = { date: clock.httpDate() };
      let reply: Reply;
      try {
        if (isUnder(path, API_PREFIX)) reply = await serveApi(req, path.slice(API_PREFIX.length), headers);
        else if (isUnder(path, LOCAL_PREFIX)) reply = await serveAdmin(req, path.slice(LOCAL_PREFIX.length));
        else throw new HttpError(404, 'NOT_FOUND', `Not found: the API lives under ${API_PREFIX}/`);
      } catch (error) {
        if (error instanceof RequestAborted) return;
        if (error instanceof HttpError) {
          reply = error.toReply();
        } else if (error instanceof StateFileError) {
          // The state file reported the cause to the operator; memory is back to what the file holds.
          reply = UNAVAILABLE;
        } else {
          deps.logError(error);
          reply = INTERNAL_ERROR;
        }
      }
      // An unread body must not be drained (it may be huge), so the connection cannot be reused.
      const answer: Reply = { status: reply.status, body: reply.body, headers: Object.assign({}, reply.headers, headers) };
      send(res, answer, deps.isClosing() || hasUnreadBody(req));
    })().catch((error: unknown) => {
      deps.logError(error);
      res.destroy();
    });
  };
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
async function requestBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const raw = await readBody(req);
  return BODY_METHODS.has(req.method ?? '') ? parseJsonObject(req, raw) : {};
}

function rateLimitHeaders(decision: RateDecision): Headers {
  return {
    [RATE_LIMIT_HEADERS.limit]: decision.limit,
    [RATE_LIMIT_HEADERS.remaining]: decision.remaining,
    [RATE_LIMIT_HEADERS.reset]: decision.resetSeconds,
    [RATE_LIMIT_HEADERS.policy]: `${decision.limit};w=${RATE_WINDOW_SECONDS}`,
  };
}
