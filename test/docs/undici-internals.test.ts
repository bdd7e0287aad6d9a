// tier: in-process
/**
 * src/client/transport.ts loads undici's private files instead of its entry
 * point (half the code, half the load time): two always, four more when a
 * proxy is configured. Private files may move or
 * change in any release, so undici is pinned exactly and this test fails,
 * naming the file, when an upgrade moves one or changes what transport.ts
 * uses: `new Agent({ keepAliveTimeout, connections })` and
 * `request.call(agent, { origin, path, method, headers, body, signal })`
 * answering `{ statusCode, headers, body.text() }`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '../..');
const requireFromRepo = createRequire(resolve(repo, 'package.json'));
const AGENT = 'undici/lib/dispatcher/agent.js';
const REQUEST = 'undici/lib/api/api-request.js';
const PROXY_AGENT = 'undici/lib/dispatcher/proxy-agent.js';
const DISPATCHER = 'undici/lib/dispatcher/dispatcher.js';
const CONNECT = 'undici/lib/api/api-connect.js';
const POOL = 'undici/lib/dispatcher/pool.js';
const SYMBOLS = 'undici/lib/core/symbols.js';

function load(file: string): unknown {
  try {
    return requireFromRepo(file);
  } catch (error) {
    throw new Error(
      `${file} cannot be loaded (${(error as Error).message.split('\n')[0]}): src/client/transport.ts imports it. ` +
        'An undici upgrade moved its private files: find their new place, or import from undici\'s entry point.',
    );
  }
}

describe('the undici files transport.ts imports', () => {
  let server: Server;
  let origin: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ method: req.method, url: req.url, authorization: req.headers.authorization }));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  it('come from an exactly pinned undici, the version installed', () => {
    const pkg = JSON.parse(readFileSync(resolve(repo, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    const range = pkg.devDependencies.undici;
    expect(range, 'undici must be pinned to one version (or ~ at most): transport.ts imports its private files').toMatch(/^~?\d+\.\d+\.\d+$/);
    const installed = (JSON.parse(readFileSync(requireFromRepo.resolve('undici/package.json'), 'utf8')) as { version: string }).version;
    const parts = range.startsWith('~') ? 2 : 3;
    expect(installed.split('.').slice(0, parts), 'node_modules holds another undici than package.json pins: run npm ci').toEqual(range.replace(/^~/, '').split('.').slice(0, parts));
  });

  it(`${AGENT} still exports the Agent class as the module itself`, () => {
    const Agent = load(AGENT) as new (options: object) => { close(): Promise<void>; dispatch: unknown };
    expect(typeof Agent, `${AGENT} no longer exports a class`).toBe('function');
    const agent = new Agent({ keepAliveTimeout: 10_000, connections: 8 });
    expect(typeof agent.dispatch, `${AGENT}: an Agent has no dispatch()`).toBe('function');
    return agent.close();
  });

  it(`${REQUEST} still exports request(), which answers through an Agent as transport.ts reads it`, async () => {
    const Agent = load(AGENT) as new (options: object) => { close(): Promise<void> };
    const request = load(REQUEST) as (this: unknown, options: object) => Promise<{
      statusCode: number;
      headers: Record<string, string | string[] | undefined>;
      body: AsyncIterable<Buffer> & { destroy(): unknown };
    }>;
    expect(typeof request, `${REQUEST} no longer exports a function`).toBe('function');
    const agent = new Agent({ keepAliveTimeout: 10_000, connections: 8 });
    try {
      const res = await request.call(agent, {
        origin,
        path: '/api/service/workspace?x=1',
        method: 'POST',
        headers: { authorization: 'Bearer sk_test', 'content-type': 'application/json' },
        body: '{}',
        signal: AbortSignal.timeout(5_000),
      });
      expect(res.statusCode, `${REQUEST}: no statusCode`).toBe(200);
      expect(res.headers['content-type'], `${REQUEST}: headers are not a plain lower-cased object`).toBe('application/json');
      const chunks: Buffer[] = [];
      for await (const chunk of res.body) chunks.push(chunk);
      expect(JSON.parse(Buffer.concat(chunks).toString('utf8')), `${REQUEST}: the body as an async iterable of Buffers`).toEqual({
        method: 'POST',
        url: '/api/service/workspace?x=1',
        authorization: 'Bearer sk_test',
      });
    } finally {
      await agent.close();
    }
  });

  it(`${PROXY_AGENT}, ${DISPATCHER} and ${CONNECT} still give the proxy agent and the connect() its tunnel calls`, async () => {
    const ProxyAgent = load(PROXY_AGENT) as new (options: object) => { close(): Promise<void>; dispatch: unknown };
    expect(typeof ProxyAgent, `${PROXY_AGENT} no longer exports a class`).toBe('function');
    const agent = new ProxyAgent({ uri: 'http://127.0.0.1:9', proxyTunnel: false });
    expect(typeof agent.dispatch, `${PROXY_AGENT}: no dispatch()`).toBe('function');
    await agent.close();
    const Dispatcher = load(DISPATCHER) as { prototype: object };
    expect(Object.getPrototypeOf(Object.getPrototypeOf(agent)), `${DISPATCHER} is not the proxy agent's base class`).toBeDefined();
    expect(agent instanceof (Dispatcher as unknown as new () => object), `${DISPATCHER} is not the class proxy agents derive from`).toBe(true);
    expect(typeof load(CONNECT), `${CONNECT} no longer exports connect()`).toBe('function');
  });

  it(`${POOL} still exports the Pool whose connect() the proxy agent's tunnel calls, and the agent takes a clientFactory`, async () => {
    const Pool = load(POOL) as new (origin: string, options: object) => { close(): Promise<void> };
    expect(typeof Pool, `${POOL} no longer exports a class`).toBe('function');
    const pool = new Pool('http://127.0.0.1:9', {});
    // connect() comes from Dispatcher.prototype, where transport.ts attaches it.
    expect(pool instanceof (load(DISPATCHER) as new () => object), `${POOL}: a Pool is no Dispatcher`).toBe(true);
    await pool.close();
    // proxy-agent.js makes its client for the proxy with opts.clientFactory; transport.ts wraps that client's connect().
    const source = readFileSync(requireFromRepo.resolve('undici/lib/dispatcher/proxy-agent.js'), 'utf8');
    expect(source, 'proxy-agent.js no longer takes a clientFactory for its client to the proxy').toMatch(/clientFactory\(url, \{ connect \}\)/);
  });

  it(`${SYMBOLS} still names the parser a connection carries, announced on undici:client:connected before a byte is read`, async () => {
    // transport.ts has that parser read a 100 Continue nobody asked for as another interim answer.
    const { kParser } = load(SYMBOLS) as { kParser?: symbol };
    expect(typeof kParser, `${SYMBOLS} no longer exports kParser`).toBe('symbol');
    const channels = await import('node:diagnostics_channel');
    const parsers: unknown[] = [];
    const onConnected = (message: unknown) => parsers.push((message as { socket: Record<symbol, unknown> }).socket[kParser!]);
    channels.subscribe('undici:client:connected', onConnected);
    const Agent = load(AGENT) as new (options: object) => { close(): Promise<void> };
    const agent = new Agent({});
    try {
      const res = await (load(REQUEST) as (this: unknown, options: object) => Promise<{ body: { text(): Promise<string> } }>).call(agent, { origin, path: '/', method: 'GET' });
      await res.body.text();
    } finally {
      channels.unsubscribe('undici:client:connected', onConnected);
      await agent.close();
    }
    expect(parsers, 'undici:client:connected no longer announces a connection undici makes').toHaveLength(1);
    expect(typeof (parsers[0] as { onHeadersComplete?: unknown })?.onHeadersComplete, `the parser under ${SYMBOLS}'s kParser has no onHeadersComplete(statusCode, …)`).toBe('function');
    const source = readFileSync(requireFromRepo.resolve('undici/lib/dispatcher/client-h1.js'), 'utf8');
    expect(source, 'client-h1.js no longer hands a 1xx other than 100 on as interim (onHeaders, then on to the answer)').toMatch(/if \(statusCode < 200\) \{\s*return 1\s*\}/);
  });
});
