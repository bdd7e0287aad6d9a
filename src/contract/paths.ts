export const API_PREFIX = '/api/service';
export const LOCAL_PREFIX = '/_local';
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8787';

export const apiPaths = {
  keys: '/user/api-keys',
  key: (id: string) => `/user/api-keys/${encodeURIComponent(id)}`,
  workspace: '/workspace',
} as const;

/** The reference server's ids are `[a-z0-9_]` only; clients treat ids as opaque. */
export const KEY_ID_PATTERN = /^[a-z0-9_]+$/;
