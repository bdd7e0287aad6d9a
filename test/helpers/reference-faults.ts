/**
 * The reference server, in this process, for tests of how svc meets
 * failures: faults are set on it through /_local/faults, and each test
 * starts from a fresh world (`POST /_local/reset`), so one server serves a
 * whole file.
 */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { LocalServerReady } from '../../src/contract/types.js';
import type { FaultRule } from '../../src/server/faults.js';
import type { LoggedRequest } from '../../src/server/request-log.js';
import { call, startLocalServer, tempConfigDir, type LocalServer } from './in-process.js';

export interface FaultyServer {
  readonly url: string;
  /** The admin token of /_local (its clock, for a test of the real rate limiter: windowEndsIn). */
  readonly adminToken: string;
  /** SVC_* for svc against this test's world: its bootstrap key, a config dir of the file's own. */
  readonly env: Record<string, string>;
  /** Adds rules for coming requests; answers them as the server stored them, ids included. */
  fault(...rules: Record<string, unknown>[]): Promise<FaultRule[]>;
  /** The rules not yet used up: a rule of `times` 1 leaves this list when a request takes it, before any delay of its own. */
  rules(): Promise<FaultRule[]>;
  /** The request log, oldest first: the order a test tells the story in. */
  requests(): Promise<LoggedRequest[]>;
  /** "METHOD /path status" of each logged request, oldest first, the /api/service prefix left out. */
  seen(): Promise<string[]>;
  /** A key named `name`, made through the API with the bootstrap key; its id. */
  makeKey(name: string): Promise<string>;
  /** Of `ids`, those still on the server. */
  left(ids: readonly string[]): Promise<string[]>;
}

export function useFaultyServer(): FaultyServer {
  const config = tempConfigDir();
  let server: LocalServer | undefined;
  let ready: LocalServerReady | undefined;
  beforeAll(async () => {
    server = await startLocalServer();
  });
  beforeEach(async () => {
    const res = await call(server!.url, 'POST', '/_local/reset', server!.adminToken);
    if (res.status !== 200) throw new Error(`reset failed with ${res.status}`);
    ready = res.json;
  });
  afterAll(async () => {
    await server?.stop();
    config.remove();
  });
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await call(server!.url, method, `/_local${path}`, server!.adminToken, body);
    if (res.status >= 300) throw new Error(`${method} /_local${path} answered ${res.status}: ${JSON.stringify(res.json)}`);
    return res.json;
  };
  const requests = async (): Promise<LoggedRequest[]> => (await admin('GET', '/requests')).requests.reverse();
  return {
    get url() {
      return server!.url;
    },
    get adminToken() {
      return server!.adminToken;
    },
    get env() {
      return { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: ready!.url, SVC_API_KEY: ready!.apiKey! };
    },
    fault: async (...rules) => (await admin('POST', '/faults', { rules })).rules,
    rules: async () => (await admin('GET', '/faults')).rules,
    requests,
    seen: async () => (await requests()).map((r) => `${r.method} ${r.path.replace(/^\/api\/service/, '')} ${r.status}`),
    async makeKey(name) {
      const res = await call(server!.url, 'POST', '/api/service/user/api-keys', ready!.apiKey!, { name });
      if (res.status !== 201) throw new Error(`the create of '${name}' answered ${res.status}`);
      return res.json.id as string;
    },
    async left(ids) {
      const listed = (await call(server!.url, 'GET', '/api/service/user/api-keys', ready!.apiKey!)).json.keys as { id: string }[];
      return ids.filter((id) => listed.some((key) => key.id === id));
    },
  };
}
