import { KEY_ID_PATTERN } from '../contract/paths.js';
import type { RevokeResult } from '../contract/types.js';
import { HttpError, JsonText, type Reply } from './http.js';
import { keyListJson, keyRecordJson } from './key-json.js';
import { Router } from './router.js';
import { workspaceView, type KeyPlace, type Store, type StoredKey, type UserState } from './store.js';
import { validCreateKey, validPatchKey } from './validation.js';

/** One authenticated, admitted request under /api/service, its body already parsed. */
export interface ApiCall {
  key: StoredKey;
  user: UserState;
  params: Record<string, string>;
  /** The query string's parameters; only the list reads any. */
  query?: Record<string, string>;
  body: Record<string, unknown>;
}

/** A handler that needs nothing but memory answers at once; one that saves answers once the change is durable. */
export type ApiHandler = (call: ApiCall) => Reply | Promise<Reply>;

export interface ApiDeps {
  store: Store;
  now: () => number;
  /** Resolves once every change made so far is durable; mutations await it before answering. */
  save: () => Promise<void>;
  /** Settles once the changes made so far are durable, without saving; rejects when they were undone. */
  whenDurable: () => Promise<void>;
  /** Keys in a page of the list unless the client asks for fewer (`limit`); DEFAULT_PAGE_SIZE when absent. */
  pageSize?: number;
}

/** The page size of `svc serve --local` unless `--page-size` says otherwise (docs/contract.md §A5). */
export const DEFAULT_PAGE_SIZE = 1_000;

/** The handlers of docs/contract.md §A5, paths relative to /api/service. */
export function apiRouter({ store, now, save, whenDurable, pageSize = DEFAULT_PAGE_SIZE }: ApiDeps): Router<ApiHandler> {
  const findKey = (user: UserState, rawId: string | undefined): StoredKey | undefined => {
    const id = decodeId(rawId);
    return id === null ? undefined : store.userKey(user, id);
  };
  const notFound = (rawId: string | undefined): HttpError => {
    const id = decodeId(rawId);
    return new HttpError(404, 'NOT_FOUND', `Not found: no API key with id ${id === null ? 'like that' : `"${id}"`}`);
  };
  const ownKey = (user: UserState, rawId: string | undefined): StoredKey => {
    const key = findKey(user, rawId);
    if (!key) throw notFound(rawId);
    return key;
  };

  return new Router<ApiHandler>()
    .add('/user/api-keys', {
      // In pages (docs/contract.md §A5): a page's records and their JSON cost the page, not the account.
      GET: ({ user, query = {} }) => {
        const page = store.keyPage(user, pageLimit(query.limit, pageSize), readCursor(query.cursor));
        const records = page.keys.map((k) => keyRecordJson(k, store.keyStatus(k)));
        return { status: 200, body: new JsonText(keyListJson(records, page.next && writeCursor(page.next))) };
      },
      POST: async ({ user, body }) => {
        const input = validCreateKey(body, now());
        const { key, secret } = store.createKey(user, input.name, input.expiresAt);
        await save();
        return { status: 201, body: store.createdKey(key, secret) };
      },
    })
    // An answer that changes nothing ("already gone" 404, "already so" 204) may rest on another request's change
    // that is still being saved. Should that save fail, the change is undone and the answer would have been false
    // (a client retrying a revoke takes its 404 for success), so such an answer waits until that change is durable.
    .add('/user/api-keys/:id', {
      GET: ({ user, params }) => ({ status: 200, body: store.keyRecord(ownKey(user, params.id)) }),
      // The body is judged before the id, so a bad body to an unknown id is a 400 (docs/contract.md §A2).
      PATCH: async ({ user, params, body }) => {
        const enabled = validPatchKey(body);
        const key = findKey(user, params.id);
        if (!key || key.enabled === enabled) {
          await whenDurable();
          if (!key) throw notFound(params.id);
          return { status: 204 };
        }
        store.setEnabled(key, enabled);
        await save();
        return { status: 200, body: store.keyRecord(key) };
      },
      DELETE: async ({ user, params }) => {
        const key = findKey(user, params.id);
        if (!key) {
          await whenDurable();
          throw notFound(params.id);
        }
        store.deleteKey(key);
        await save();
        const body: RevokeResult = { id: key.id, revoked: true };
        return { status: 200, body };
      },
    })
    .add('/workspace', {
      GET: ({ key }) => ({ status: 200, body: workspaceView(store.workspace(key.workspaceId)!) }),
    });
}

/** A key id from a path segment, or null when it cannot name any key (bad percent-encoding, foreign characters). */
function decodeId(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  try {
    const id = decodeURIComponent(raw);
    return KEY_ID_PATTERN.test(id) ? id : null;
  } catch {
    return null;
  }
}

/** `limit`: a whole number of keys from 1; more than the page size gets the page size, as services cap a page. */
function pageLimit(raw: string | undefined, pageSize: number): number {
  if (raw === undefined) return pageSize;
  if (!/^[1-9]\d{0,8}$/.test(raw)) throw new HttpError(400, 'INVALID_REQUEST', 'Invalid request: limit must be a whole number of keys, 1 or more');
  return Math.min(Number(raw), pageSize);
}

/** A cursor is a key's place, `<createdAt>.<added>` in base 36: opaque to clients, who send back what they were given. */
function writeCursor(place: KeyPlace): string {
  return `${place.createdAt.toString(36)}.${place.added.toString(36)}`;
}

function readCursor(raw: string | undefined): KeyPlace | null {
  if (raw === undefined) return null;
  const match = /^([0-9a-z]{1,12})\.([0-9a-z]{1,12})$/.exec(raw);
  if (!match) throw new HttpError(400, 'INVALID_REQUEST', "Invalid request: cursor is not one this server gave (send back a page's nextCursor as it came)");
  return { createdAt: parseInt(match[1]!, 36), added: parseInt(match[2]!, 36) };
}
