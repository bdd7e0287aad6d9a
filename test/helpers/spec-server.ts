import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A server written from the spec's text alone (spec/api-spec.md), not from
 * our reading of it in src/server: where the spec is silent it can make
 * other choices, switched by a Variation, so svc is tested against a
 * service it did not write the other half of.
 */
export interface SpecKey {
  id: string;
  name: string;
  secret: string;
  enabled: boolean;
  createdAt: number;
  expiresAt: number | null;
}

export interface Variation {
  /** The create answer's body; the spec does not name where the secret goes. Default: the record plus `secret`. */
  created?: (record: Record<string, unknown>, secret: string) => unknown;
  /** Status of a successful create; the spec does not say (201 or 200). */
  createdStatus?: number;
  /** How ids look; the spec only says they are distinct. */
  newId?: () => string;
}

/** What happens to the answer of a request that matches; the work itself is always done. */
export interface AnswerRule {
  method: string;
  /** Matched against the path below /api/service. */
  path?: RegExp;
  /** How many matching requests it applies to. */
  times: number;
  /** 'drop': the connection is cut before the answer; otherwise this status with `body` (text) instead of the real answer. */
  then: 'drop' | { status: number; body: string };
  /** False: the rule answers without doing the work (the request never took effect). Default true. */
  work?: boolean;
}

export interface SpecServer {
  url: string;
  apiKey: string;
  keys: Map<string, SpecKey>;
  /** Requests seen, as "METHOD /path". */
  seen: string[];
  rules: AnswerRule[];
  close(): Promise<void>;
}

const PREFIX = '/api/service';

export function newSecret(): string {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  return `sk_${[...randomBytes(64)].map((b) => alphabet[b % 62]).join('')}`;
}

function hash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export async function startSpecServer(variation: Variation = {}): Promise<SpecServer> {
  const keys = new Map<string, SpecKey>();
  const byHash = new Map<string, SpecKey>();
  const seen: string[] = [];
  const rules: AnswerRule[] = [];
  const newId = variation.newId ?? (() => randomUUID().replace(/-/g, '').slice(0, 16));

  const add = (name: string, expiresAt: number | null): SpecKey => {
    const key: SpecKey = { id: newId(), name, secret: newSecret(), enabled: true, createdAt: Date.now(), expiresAt };
    keys.set(key.id, key);
    byHash.set(hash(key.secret), key);
    return key;
  };
  const bootstrap = add('bootstrap', null);

  const record = (k: SpecKey): Record<string, unknown> => ({
    id: k.id,
    name: k.name,
    enabled: k.enabled,
    createdAt: new Date(k.createdAt).toISOString(),
    expiresAt: k.expiresAt === null ? null : new Date(k.expiresAt).toISOString(),
  });

  const route = (method: string, path: string, body: Record<string, unknown>): { status: number; body?: unknown } => {
    if (path === '/user/api-keys' && method === 'GET') {
      return { status: 200, body: { keys: [...keys.values()].reverse().map(record) } };
    }
    if (path === '/user/api-keys' && method === 'POST') {
      if (typeof body.name !== 'string' || body.name.trim() === '') return { status: 400, body: { error: 'name is required' } };
      const expiresAt = typeof body.expiresAt === 'string' ? Date.parse(body.expiresAt) : null;
      const key = add(body.name, expiresAt);
      const shape = variation.created ?? ((r, secret) => ({ ...r, secret }));
      return { status: variation.createdStatus ?? 201, body: shape(record(key), key.secret) };
    }
    const one = /^\/user\/api-keys\/([^/]+)$/.exec(path);
    if (one) {
      const key = keys.get(decodeURIComponent(one[1]!));
      if (!key) return { status: 404, body: { error: 'Not found' } };
      if (method === 'GET') return { status: 200, body: record(key) };
      if (method === 'DELETE') {
        keys.delete(key.id);
        byHash.delete(hash(key.secret));
        return { status: 200, body: { id: key.id, revoked: true } };
      }
      if (method === 'PATCH') {
        if (typeof body.enabled !== 'boolean') return { status: 400, body: { error: 'enabled must be a boolean' } };
        if (key.enabled === body.enabled) return { status: 204 };
        key.enabled = body.enabled;
        return { status: 200, body: record(key) };
      }
      return { status: 405, body: { error: 'Method not allowed' } };
    }
    return { status: 404, body: { error: 'Not found' } };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0]!;
    const method = req.method ?? '';
    seen.push(`${method} ${path}`);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (!path.startsWith(`${PREFIX}/`)) return send(res, 404, { error: 'Not found' });
    const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const caller = token === undefined ? undefined : byHash.get(hash(token));
    if (!caller || !caller.enabled || (caller.expiresAt !== null && caller.expiresAt <= Date.now())) {
      return send(res, 401, { error: 'Unauthorized: authentication failed' });
    }
    let body: Record<string, unknown> = {};
    const isJson = /^application\/json\b/i.test(req.headers['content-type'] ?? '');
    if (isJson && chunks.length > 0) {
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return send(res, 400, { error: 'Invalid JSON' });
      }
    }
    const sub = path.slice(PREFIX.length);
    const rule = rules.find((r) => r.times > 0 && r.method === method && (!r.path || r.path.test(sub)));
    if (rule) rule.times--;
    const answer = rule?.work === false ? undefined : route(method, sub, body);
    if (!rule) return send(res, answer!.status, answer!.body);
    if (rule.then === 'drop') return res.socket?.destroy();
    res.writeHead(rule.then.status, { 'content-type': 'application/json' });
    res.end(rule.then.body);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    apiKey: bootstrap.secret,
    keys,
    seen,
    rules,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, status: number, body?: unknown): void {
  if (body === undefined) {
    res.writeHead(status);
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
