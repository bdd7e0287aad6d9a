import { afterAll, describe, expect, it } from 'vitest';
import { svc, tempConfigDir } from '../helpers/cli.js';
import { refusedUrl, sendJson, startFaultServer } from '../helpers/fault-server.js';

const KEY = `sk_${'F'.repeat(64)}`;
const config = tempConfigDir();
afterAll(() => config.remove());

const env = (url: string) => ({ SVC_API_KEY: KEY, SVC_BASE_URL: url, SVC_CONFIG_DIR: config.dir });

describe('network errors and 5xx (docs/contract.md §C4)', () => {
  it('retries a read through 5xx and succeeds, saying why it waited', async () => {
    const server = await startFaultServer((_req, res, n) =>
      n < 3 ? sendJson(res, 503, { error: 'busy', code: 'INTERNAL' }) : sendJson(res, 200, { keys: [] }),
    );
    const result = await svc(['keys', 'list', '--json'], env(server.url));
    await server.close();
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ keys: [] });
    expect(server.seen).toHaveLength(3);
    expect(result.stderr).toMatch(/Request failed \(503\); retrying in 0\.\d s\./);
  });

  it('gives up after four retries with exit 1', async () => {
    const server = await startFaultServer((_req, res) => sendJson(res, 500, { error: 'broken', code: 'INTERNAL' }));
    const result = await svc(['keys', 'list'], env(server.url));
    await server.close();
    expect(result.exitCode).toBe(1);
    expect(server.seen).toHaveLength(5);
    expect(result.stderr).toContain('failed (500 INTERNAL): broken');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  }, 30_000);

  it('retries a reset connection on a read', async () => {
    const server = await startFaultServer((req, res, n) => (n === 1 ? req.socket.destroy() : sendJson(res, 200, { keys: [] })));
    const result = await svc(['keys', 'list', '--json'], env(server.url));
    await server.close();
    expect(result.exitCode).toBe(0);
    expect(server.seen).toHaveLength(2);
  });

  it('does not retry a create whose connection was reset, and says how to check', async () => {
    const server = await startFaultServer((req) => req.socket.destroy());
    const result = await svc(['keys', 'create', 'ci'], env(server.url));
    await server.close();
    expect(result.exitCode).toBe(1);
    // The one GET is svc looking for a key the create may have made; the same fault answers it.
    expect(server.seen).toEqual(['POST /api/service/user/api-keys', 'GET /api/service/user/api-keys']);
    expect(result.stderr).toContain('may have reached the server');
    expect(result.stderr).toContain('svc could not look for it');
    expect(result.stderr).toContain('svc keys list');
  });

  it('does not retry a create answered 502', async () => {
    const server = await startFaultServer((_req, res) => sendJson(res, 502, { error: 'bad gateway' }));
    const result = await svc(['keys', 'create', 'ci'], env(server.url));
    await server.close();
    expect(result.exitCode).toBe(1);
    expect(server.seen).toEqual(['POST /api/service/user/api-keys', 'GET /api/service/user/api-keys']);
  });

  it('retries a refused connection, then fails with exit 1 and a hint', async () => {
    const result = await svc(['keys', 'create', 'ci'], env(await refusedUrl()));
    expect(result.exitCode).toBe(1);
    expect(result.stderr.match(/retrying in/g)).toHaveLength(4);
    expect(result.stderr).toContain('connection refused');
    expect(result.stderr).toContain('svc serve --local');
  }, 30_000);

  it('times out with --timeout', async () => {
    const server = await startFaultServer(() => {});
    const result = await svc(['keys', 'create', 'slow', '--timeout', '200'], env(server.url));
    await server.close();
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('no answer within 200 ms');
  });

  it('treats a 429 without RATE_LIMITED as an ordinary failure', async () => {
    const server = await startFaultServer((_req, res) => sendJson(res, 429, { error: 'quota spent', code: 'QUOTA' }, { 'retry-after': '1' }));
    const result = await svc(['keys', 'list'], env(server.url));
    await server.close();
    expect(result.exitCode).toBe(1);
    expect(server.seen).toHaveLength(1);
  });

  it('reports a 200 that is not JSON as an unexpected response', async () => {
    const server = await startFaultServer((_req, res) => res.end('<html>hello</html>'));
    const result = await svc(['keys', 'list'], env(server.url));
    await server.close();
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('Unexpected response');
  });
});
