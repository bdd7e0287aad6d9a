import type { ClockReading, LocalServerReady } from '../contract/types.js';
import { CLOCK_LIMIT_MS, isoTime, type Clock } from './clock.js';
import type { FaultTable } from './faults.js';
import type { LateChanges } from './late-changes.js';
import { HttpError, type Reply } from './http.js';
import { openApiDocument } from './openapi.js';
import { REQUEST_LOG_SIZE, type RequestLog } from './request-log.js';
import { Router } from './router.js';
import { userView, workspaceView, type Store } from './store.js';
import { has, invalid, onlyFields, validId, validName, validPlan } from './validation.js';

/** One request to the /_local admin area, the admin token already checked. */
export interface AdminCall {
  params: Record<string, string>;
  query: Record<string, string>;
  body: Record<string, unknown>;
}

export type AdminHandler = (call: AdminCall) => Promise<Reply>;

export interface AdminDeps {
  store: Store;
  clock: Clock;
  save: () => Promise<void>;
  faults: FaultTable;
  requestLog: RequestLog;
  lateChanges: LateChanges;
  reset: () => Promise<LocalServerReady>;
}

/** The local admin area of docs/contract.md §B, paths relative to /_local. */
export function adminRouter({ store, clock, save, faults, requestLog, lateChanges, reset }: AdminDeps): Router<AdminHandler> {
  const clockReading = (): Reply => {
    const body: ClockReading = { now: isoTime(clock.now()) };
    return { status: 200, body };
  };
  const notFound = (what: string, rawId: string | undefined): HttpError =>
    new HttpError(404, 'NOT_FOUND', `Not found: no ${what} with id "${safeDecode(rawId)}"`);

  return new Router<AdminHandler>()
    .add('/users', {
      POST: async ({ body }) => {
        onlyFields(body, ['name', 'plan']);
        const name = has(body, 'name') ? validName(body.name, 'name') : 'User';
        const plan = has(body, 'plan') ? validPlan(body.plan, 'plan') : 'free';
        const { user, workspace } = store.createUser(name, plan);
        const { key, secret } = store.createKey(user, 'default', null);
        await save();
        return {
          status: 201,
          body: { user: userView(user), workspace: workspaceView(workspace), apiKey: store.createdKey(key, secret) },
        };
      },
    })
    .add('/workspaces', {
      POST: async ({ body }) => {
        onlyFields(body, ['userId', 'name', 'plan']);
        const userId = validId(body.userId, 'userId');
        const name = has(body, 'name') ? validName(body.name, 'name') : 'Workspace';
        const plan = validPlan(body.plan, 'plan');
        const user = store.user(userId);
        if (!user) throw invalid(`"userId" names no user: "${userId}"`);
        const workspace = store.createWorkspace(user, name, plan);
        await save();
        return { status: 201, body: workspaceView(workspace) };
      },
    })
    .add('/workspaces/:id', {
      PATCH: async ({ params, body }) => {
        onlyFields(body, ['plan']);
        const plan = validPlan(body.plan, 'plan');
        const workspace = store.workspace(safeDecode(params.id));
        if (!workspace) throw notFound('workspace', params.id);
        store.setPlan(workspace, plan);
        await save();
        return { status: 200, body: workspaceView(workspace) };
      },
    })
    .add('/users/:id/active-workspace', {
      PUT: async ({ params, body }) => {
        onlyFields(body, ['workspaceId']);
        const workspaceId = validId(body.workspaceId, 'workspaceId');
        const user = store.user(safeDecode(params.id));
        if (!user) throw notFound('user', params.id);
        const workspace = store.workspace(workspaceId);
        if (!workspace || !user.workspaceIds.includes(workspace.id)) {
          throw invalid(`"workspaceId" is not one of this user's workspaces: "${workspaceId}"`);
        }
        store.setActiveWorkspace(user, workspace);
        await save();
        return { status: 200, body: userView(user) };
      },
    })
    .add('/clock', {
      GET: async () => clockReading(),
      POST: async ({ body }) => {
        onlyFields(body, ['advanceSeconds']);
        const seconds = body.advanceSeconds;
        if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) {
          throw invalid('"advanceSeconds" must be a finite number of seconds, 0 or more');
        }
        if (clock.now() + seconds * 1000 > CLOCK_LIMIT_MS) {
          throw invalid(`"advanceSeconds" would move the clock past ${isoTime(CLOCK_LIMIT_MS)}, the latest it may be set to`);
        }
        clock.advance(seconds);
        // Changes a fault held back until this time are made before the answer: a client's next request sees them.
        await lateChanges.due();
        return clockReading();
      },
    })
    .add('/reset', {
      POST: async ({ body }) => {
        onlyFields(body, []);
        return { status: 200, body: await reset() };
      },
    })
    .add('/faults', {
      GET: async () => ({ status: 200, body: { rules: faults.list() } }),
      POST: async ({ body }) => ({ status: 201, body: { rules: faults.add(body) } }),
      DELETE: async () => {
        faults.clear();
        return { status: 204 };
      },
    })
    .add('/requests', {
      GET: async ({ query }) => {
        const limit = query.limit === undefined ? REQUEST_LOG_SIZE : Number(query.limit);
        if (!/^\d+$/.test(query.limit ?? '0') || limit < 1) {
          throw invalid(`"limit" must be a whole number from 1 to ${REQUEST_LOG_SIZE}`);
        }
        return { status: 200, body: { requests: requestLog.newest(Math.min(limit, REQUEST_LOG_SIZE)) } };
      },
    })
    .add('/openapi.json', {
      GET: async () => ({ status: 200, body: openApiDocument() }),
    });
}

function safeDecode(raw: string | undefined): string {
  try {
    return decodeURIComponent(raw ?? '');
  } catch {
    return raw ?? '';
  }
}
