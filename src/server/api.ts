import { KEY_ID_PATTERN } from '../contract/paths.js';
import type { KeyList, RevokeResult } from '../contract/types.js';
import { HttpError, type Reply } from './http.js';
import { Router } from './router.js';
import { workspaceView, type Store, type StoredKey, type UserState } from './store.js';
import { validCreateKey, validPatchKey } from './validation.js';

/** One authenticated, admitted request under /api/service, its body already parsed. */
export interface ApiCall {
  key: StoredKey;
  user: UserState;
  params: Record<string, string>;
  body: Record<string, unknown>;
}

export type ApiHandler = (call: ApiCall) => Promise<Reply>;

export interface ApiDeps {
  store: Store;
  now: () => number;
  /** Resolves once every change made so far is durable; mutations await it before answering. */
  save: () => Promise<void>;
}

/** The handlers of CONTRACT §A5, paths relative to /api/service. */
export function apiRouter({ store, now, save }: ApiDeps): Router<ApiHandler> {
  const ownKey = (user: UserState, rawId: string | undefined): StoredKey => {
    const id = decodeId(rawId);
    const key = id === null ? undefined : store.userKey(user, id);
    if (!key) throw new HttpError(404, 'NOT_FOUND', `Not found: no API key with id ${id === null ? 'like that' : `"${id}"`}`);
    return key;
  };

  return new Router<ApiHandler>()
    .add('/user/api-keys', {
      GET: async ({ user }) => {
        const body: KeyList = { keys: store.userKeys(user).map((k) => store.keyRecord(k)) };
        return { status: 200, body };
      },
      POST: async ({ user, body }) => {
        const input = validCreateKey(body, now());
        const { key, secret } = store.createKey(user, input.name, input.expiresAt);
        await save();
        return { status: 201, body: store.createdKey(key, secret) };
      },
    })
    .add('/user/api-keys/:id', {
      GET: async ({ user, params }) => ({ status: 200, body: store.keyRecord(ownKey(user, params.id)) }),
      // The body is judged before the id, so a bad body to an unknown id is a 400 (CONTRACT §A2).
      PATCH: async ({ user, params, body }) => {
        const enabled = validPatchKey(body);
        const key = ownKey(user, params.id);
        if (key.enabled === enabled) return { status: 204 };
        store.setEnabled(key, enabled);
        await save();
        return { status: 200, body: store.keyRecord(key) };
      },
      DELETE: async ({ user, params }) => {
        const key = ownKey(user, params.id);
        store.deleteKey(key);
        await save();
        const body: RevokeResult = { id: key.id, revoked: true };
        return { status: 200, body };
      },
    })
    .add('/workspace', {
      GET: async ({ key }) => ({ status: 200, body: workspaceView(store.workspace(key.workspaceId)!) }),
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
