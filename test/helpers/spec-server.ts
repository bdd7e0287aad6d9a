import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

/**
 * A server written from the spec's text alone (spec/api-spec.md), not from
 * our reading of it in src/server. Where the spec says "not shown" it makes
 * the plainest choice by default (no GET of one key, no workspace endpoint,
 * a record of id, name, enabled and two times), and a Variation switches to
 * the other choices a real service may make, so svc is tested against a
 * service it did not write the other half of.
 */
export interface SpecKey {
  /** The id as it appears in paths. */
  id: string;
  /** The id as the record carries it: a number on servers with numeric ids. */
  idValue: string | number;
  name: string;
  secret: string;
  enabled: boolean;
  createdAt: number;
  expiresAt: number | null;
  lastUsedAt: number | null;
}

export interface Variation {
  /** The create answer's body; the spec does not name where the secret goes. Default: the record plus `secret`. */
  created?: (record: Record<string, unknown>, secret: string) => unknown;
  /** Status of a successful create; the spec does not say (201 or 200). */
  createdStatus?: number;
  /** How ids look; the spec only says they are distinct. */
  newId?: () => string | number;
  /** A key's record; the spec names none of its fields. */
  record?: (key: SpecKey, nowMs: number) => Record<string, unknown>;
  /** Offer GET /user/api-keys/{id}, which the spec does not have. */
  getOne?: boolean;
  /** Offer GET /workspace (this document), which the spec does not have. */
  workspace?: Record<string, unknown>;
  /** Where keys are created; the spec does not show it. */
  createPath?: string;
  /** The server's clock runs this far from ours (its Date header, expiry, timestamps). */
  clockOffsetMs?: number;
  /** The server's clock itself, instead of ours: one that a test moves, so a time falls where it means it to. */
  now?: () => number;
  /** Serve HTTPS with this certificate and key (PEM). */
  tls?: { cert: string; key: string };
  /** Compress every answer so, whatever the client asked for (as some proxies do). */
  encoding?: 'gzip' | 'deflate' | 'br';
  /**
   * List keys in pages of `size`, the next one named the way `style` says (the spec shows no paging; services do page):
   * `next_cursor`; `next_cursor` with an empty page before each page of keys (AIP-158 allows empty pages);
   * `has_more` with `?page=`; a Link header; JSON:API's `links.next`; or, ways svc cannot follow,
   * a `next_page_token`, a `total` and nothing else, `has_more` with a server that ignores `?page=`,
   * a second page whose `next_cursor` names itself, and a Link header to another host.
   */
  pages?: {
    size: number;
    style: 'cursor' | 'empty-pages' | 'has-more' | 'link' | 'links-next' | 'token' | 'total-only' | 'has-more-ignored' | 'cursor-loop' | 'foreign-link';
  };
  /** The list's order; the spec does not say. Default newest first. */
  order?: 'newest-first' | 'oldest-first';
  /** PATCH answers 204 to every change it makes, as some services do, not only to one that changes nothing. */
  patchNoContent?: boolean;
  /** A create is answered (or its answer lost) before the key is in the list: it appears there only on commitPending(). */
  lateCommit?: boolean;
  /**
   * A connection that already carried a request is closed as the next one arrives, unanswered: what a
   * client meets when a server drops an idle keep-alive connection just as the client reuses it.
   */
  dropReusedConnections?: boolean;
  /** Called as each request arrives, before it is answered: another client changing the keys between two pages. */
  onRequest?: (method: string, path: string, query: URLSearchParams) => void;
  /** An informational answer nobody asked for before every real one: a 100 Continue or a 103 Early Hints (RFC 9110 §15.2). */
  interim?: 100 | 103;
}

/** Record shapes a service may choose. */
export const records = {
  /** The fields the spec names, and two times, camelCase ISO. */
  plain: (k: SpecKey): Record<string, unknown> => ({
    id: k.idValue,
    name: k.name,
    enabled: k.enabled,
    createdAt: new Date(k.createdAt).toISOString(),
    expiresAt: k.expiresAt === null ? null : new Date(k.expiresAt).toISOString(),
  }),
  snakeEpochSeconds: (k: SpecKey): Record<string, unknown> => ({
    id: k.idValue,
    name: k.name,
    enabled: k.enabled,
    created_at: Math.floor(k.createdAt / 1000),
    expires_at: k.expiresAt === null ? null : Math.floor(k.expiresAt / 1000),
    last_used_at: k.lastUsedAt === null ? null : Math.floor(k.lastUsedAt / 1000),
    workspace_id: 'team-1',
  }),
  epochMilliseconds: (k: SpecKey): Record<string, unknown> => ({
    id: k.idValue,
    name: k.name,
    enabled: k.enabled,
    createdAt: k.createdAt,
    expiresAt: k.expiresAt,
    lastUsedAt: k.lastUsedAt,
    scopes: ['media:write'],
  }),
  /** Other words for the same fields: a label, `active`, `created`, `expires`, `last_used`. */
  labelled: (k: SpecKey): Record<string, unknown> => ({
    id: k.idValue,
    label: k.name,
    active: k.enabled,
    created: new Date(k.createdAt).toISOString(),
    expires: k.expiresAt === null ? null : new Date(k.expiresAt).toISOString(),
    last_used: k.lastUsedAt === null ? null : new Date(k.lastUsedAt).toISOString(),
  }),
  /** Names and ids only: nothing a filter on time or state can read. */
  bare: (k: SpecKey): Record<string, unknown> => ({ id: k.idValue, name: k.name }),
  /** Our own reading of the spec (docs/contract.md §A4), for comparison. */
  full: (k: SpecKey, nowMs: number): Record<string, unknown> => ({
    id: k.idValue,
    name: k.name,
    hint: `sk_${k.secret.slice(3, 7)}\u2026${k.secret.slice(-4)}`,
    enabled: k.enabled,
    status: k.expiresAt !== null && k.expiresAt <= nowMs ? 'expired' : k.enabled ? 'enabled' : 'disabled',
    workspaceId: 'ws_1',
    createdAt: new Date(k.createdAt).toISOString(),
    expiresAt: k.expiresAt === null ? null : new Date(k.expiresAt).toISOString(),
    lastUsedAt: k.lastUsedAt === null ? null : new Date(k.lastUsedAt).toISOString(),
  }),
};

/** What happens to the answer of a request that matches; the work itself is done unless `work` is false. */
export interface AnswerRule {
  method: string;
  /** Matched against the path below /api/service. */
  path?: RegExp;
  /** How many matching requests it applies to. */
  times: number;
  /** 'drop': the connection is cut before the answer; otherwise this status, body (text) and headers instead of the real answer. */
  then: 'drop' | { status: number; body: string; headers?: (serverNowMs: number) => Record<string, string> };
  /** False: the rule answers without doing the work (the request never took effect). Default true. */
  work?: boolean;
}

export interface SpecServer {
  url: string;
  port: number;
  apiKey: string;
  /** Puts a key straight into the server's state, as another client would have made it. */
  addKey(name: string, expiresAt?: number | null): SpecKey;
  keys: Map<string, SpecKey>;
  /** Requests seen, as "METHOD /path". */
  seen: string[];
  /** The headers of each request seen, in the same order. */
  seenHeaders: Record<string, string | string[] | undefined>[];
  rules: AnswerRule[];
  /** With `lateCommit`: puts the keys made so far into the list. */
  commitPending(): void;
  /** Connections closed unanswered by `dropReusedConnections`. */
  dropped: number;
  close(): Promise<void>;
}

const PREFIX = '/api/service';
const COLLECTION = '/user/api-keys';

export function newSecret(): string {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  return `sk_${[...randomBytes(64)].map((b) => alphabet[b % 62]).join('')}`;
}

function hash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

type Answer = { status: number; body?: unknown; headers?: Record<string, string> };

export async function startSpecServer(variation: Variation = {}): Promise<SpecServer> {
  const keys = new Map<string, SpecKey>();
  const byHash = new Map<string, SpecKey>();
  const pending = new Set<string>();
  const seen: string[] = [];
  const seenHeaders: Record<string, string | string[] | undefined>[] = [];
  const used = new WeakSet<object>();
  let dropped = 0;
  const rules: AnswerRule[] = [];
  const now = variation.now ?? (() => Date.now() + (variation.clockOffsetMs ?? 0));
  const newId = variation.newId ?? (() => randomUUID().replace(/-/g, '').slice(0, 16));
  const record = (k: SpecKey) => (variation.record ?? records.plain)(k, now());
  const createPath = variation.createPath ?? COLLECTION;

  const add = (name: string, expiresAt: number | null): SpecKey => {
    const idValue = newId();
    const key: SpecKey = { id: String(idValue), idValue, name, secret: newSecret(), enabled: true, createdAt: now(), expiresAt, lastUsedAt: null };
    keys.set(key.id, key);
    byHash.set(hash(key.secret), key);
    return key;
  };
  const bootstrap = add('bootstrap', null);

  const create = (body: Record<string, unknown>): Answer => {
    if (typeof body.name !== 'string' || body.name.trim() === '') return { status: 400, body: { error: 'name is required' } };
    let expiresAt: number | null = null;
    if (body.expiresAt !== undefined && body.expiresAt !== null) {
      expiresAt = typeof body.expiresAt === 'string' ? Date.parse(body.expiresAt) : Number.NaN;
      if (!(expiresAt > now())) return { status: 400, body: { error: 'expiresAt must be in the future' } };
    }
    const key = add(body.name, expiresAt);
    if (variation.lateCommit) pending.add(key.id);
    const shape = variation.created ?? ((r, secret) => ({ ...r, secret }));
    return { status: variation.createdStatus ?? 201, body: shape(record(key), key.secret) };
  };

  /** One page of the list, newest first unless `order` says otherwise; the whole list when the variation does not page. */
  const list = (query: URLSearchParams): Answer => {
    const listed = [...keys.values()].filter((k) => !pending.has(k.id));
    const all = (variation.order === 'oldest-first' ? listed : listed.reverse()).map(record);
    const paging = variation.pages;
    if (!paging) return { status: 200, body: { keys: all } };
    const { size, style } = paging;
    const cursor = Number(query.get('cursor') ?? 0);
    // Empty pages: cursor 2n is an empty page, 2n + 1 the nth page of keys.
    if (style === 'empty-pages' && cursor % 2 === 0) return { status: 200, body: { keys: [], next_cursor: String(cursor + 1) } };
    const asked = style === 'has-more-ignored' ? 1 : Number(query.get('page') ?? 1);
    const page = style === 'cursor' || style === 'cursor-loop' ? cursor / size + 1 : style === 'empty-pages' ? (cursor + 1) / 2 : asked;
    const slice = all.slice((page - 1) * size, page * size);
    const more = page * size < all.length;
    const next = `${PREFIX}${COLLECTION}?page=${page + 1}`;
    switch (style) {
      case 'cursor':
        return { status: 200, body: { keys: slice, next_cursor: more ? String(page * size) : null } };
      case 'cursor-loop':
        // Every page names the second as the next, the second itself too.
        return { status: 200, body: { keys: slice, next_cursor: more ? String(size) : null } };
      case 'empty-pages':
        return { status: 200, body: { keys: slice, next_cursor: more ? String(cursor + 1) : null } };
      case 'has-more':
      case 'has-more-ignored':
        return { status: 200, body: { keys: slice, has_more: more, ...(style === 'has-more' ? { page } : {}) } };
      case 'links-next':
        return { status: 200, body: { keys: slice, links: { self: `${PREFIX}${COLLECTION}?page=${page}`, next: more ? next : null } } };
      case 'token':
        return { status: 200, body: { keys: slice, next_page_token: more ? `t${page + 1}` : null } };
      case 'total-only':
        return { status: 200, body: { keys: slice, total: all.length } };
      case 'link':
        return { status: 200, body: { keys: slice }, headers: more ? { link: `<${next}>; rel="next"` } : {} };
      case 'foreign-link':
        return { status: 200, body: { keys: slice }, headers: more ? { link: `<https://elsewhere.test${next}>; rel="next"` } : {} };
    }
  };

  const route = (method: string, path: string, body: Record<string, unknown>, query: URLSearchParams): Answer => {
    const notFound = { status: 404, body: { error: 'Not found' } };
    if (path === createPath && method === 'POST') return create(body);
    if (path === COLLECTION && method === 'GET') return list(query);
    if (path === '/workspace' && method === 'GET' && variation.workspace) return { status: 200, body: variation.workspace };
    const one = /^\/user\/api-keys\/([^/]+)$/.exec(path);
    if (!one) return notFound;
    const key = keys.get(decodeURIComponent(one[1]!));
    if (method === 'GET' && !variation.getOne) return notFound;
    if (!key) return notFound;
    if (method === 'GET') return { status: 200, body: record(key) };
    if (method === 'DELETE') {
      keys.delete(key.id);
      byHash.delete(hash(key.secret));
      return { status: 200, body: { id: key.idValue, revoked: true } };
    }
    if (method === 'PATCH') {
      if (typeof body.enabled !== 'boolean') return { status: 400, body: { error: 'enabled must be a boolean' } };
      if (key.enabled === body.enabled) return { status: 204 };
      key.enabled = body.enabled;
      return variation.patchNoContent ? { status: 204 } : { status: 200, body: record(key) };
    }
    return { status: 405, body: { error: 'Method not allowed' } };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    res.sendDate = false;
    res.setHeader('date', new Date(now()).toUTCString());
    const [path = '', search = ''] = (req.url ?? '').split('?', 2);
    const method = req.method ?? '';
    if (variation.dropReusedConnections && req.socket) {
      if (used.has(req.socket)) {
        dropped++;
        return req.socket.destroy();
      }
      used.add(req.socket);
    }
    seen.push(`${method} ${path}`);
    seenHeaders.push({ ...req.headers });
    variation.onRequest?.(method, path, new URLSearchParams(search));
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (variation.interim === 100) res.writeContinue();
    if (variation.interim === 103) res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
    const send = (status: number, body?: unknown) => reply(res, status, body, variation.encoding);
    if (!path.startsWith(`${PREFIX}/`)) return send(404, { error: 'Not found' });
    const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const caller = token === undefined ? undefined : byHash.get(hash(token));
    if (!caller || !caller.enabled || (caller.expiresAt !== null && caller.expiresAt <= now())) {
      return send(401, { error: 'Unauthorized: authentication failed' });
    }
    caller.lastUsedAt = now();
    let body: Record<string, unknown> = {};
    const isJson = /^application\/json\b/i.test(req.headers['content-type'] ?? '');
    if (isJson && chunks.length > 0) {
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return send(400, { error: 'Invalid JSON' });
      }
    }
    const sub = path.slice(PREFIX.length);
    const rule = rules.find((r) => r.times > 0 && r.method === method && (!r.path || r.path.test(sub)));
    if (rule) rule.times--;
    const answer = rule?.work === false ? undefined : route(method, sub, body, new URLSearchParams(search));
    if (!rule) {
      for (const [name, value] of Object.entries(answer!.headers ?? {})) res.setHeader(name, value);
      return send(answer!.status, answer!.body);
    }
    if (rule.then === 'drop') return res.socket?.destroy();
    res.writeHead(rule.then.status, { 'content-type': 'application/json', ...rule.then.headers?.(now()) });
    res.end(rule.then.body);
  };

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch(() => res.destroy());
  };
  const server = variation.tls ? createHttpsServer(variation.tls, listener) : createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${variation.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    apiKey: bootstrap.secret,
    addKey: (name, expiresAt = null) => add(name, expiresAt),
    keys,
    seen,
    seenHeaders,
    rules,
    commitPending: () => pending.clear(),
    get dropped() {
      return dropped;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A spec server for each test that starts one, closed after the test:
 * `start` gives the environment that points svc at it (a key, the address,
 * the config directory), `server` the one running now.
 */
export function useSpecServer(config: { dir: string }): { start(variation?: Variation): Promise<Record<string, string>>; readonly server: SpecServer } {
  let current: SpecServer | undefined;
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return {
    async start(variation: Variation = {}) {
      current = await startSpecServer(variation);
      return { SVC_BASE_URL: current.url, SVC_API_KEY: current.apiKey, SVC_CONFIG_DIR: config.dir };
    },
    get server() {
      if (current === undefined) throw new Error('no spec server started in this test');
      return current;
    },
  };
}

const COMPRESS = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };

function reply(res: ServerResponse, status: number, body: unknown, encoding: Variation['encoding']): void {
  if (body === undefined) {
    res.writeHead(status);
    res.end();
    return;
  }
  const text = Buffer.from(JSON.stringify(body));
  if (!encoding) {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(text);
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', 'content-encoding': encoding, vary: 'accept-encoding' });
  res.end(COMPRESS[encoding](text));
}
