// tier: process
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../helpers/certificate.js';
import { svc, tempConfigDir } from '../helpers/in-process.js';
import { refusedUrl, startFaultServer } from '../helpers/fault-server.js';
import { startForwardProxy, type ForwardProxy } from '../helpers/forward-proxy.js';
import { startSpecServer, type SpecServer } from '../helpers/spec-server.js';

// docs/contract.md §C1, §C4, §A1: real networks. A forwarding proxy, a self-signed
// HTTPS server made now, a server that compresses whatever it is asked. What
// NODE_EXTRA_CA_CERTS changes is read at a process's start: test/e2e/certificates.test.ts.

const certificate = selfSignedCertificate();
const config = tempConfigDir();
let proxy: ForwardProxy;
let plain: SpecServer;
let secure: SpecServer;
beforeAll(async () => {
  [proxy, plain, secure] = await Promise.all([
    startForwardProxy(),
    startSpecServer(),
    startSpecServer({ tls: { cert: certificate.cert, key: certificate.key } }),
  ]);
});
afterAll(async () => {
  await Promise.all([proxy.close(), plain.close(), secure.close()]);
  certificate.remove();
  config.remove();
});

const base = (server: SpecServer) => ({ SVC_API_KEY: server.apiKey, SVC_CONFIG_DIR: config.dir });

describe('a forwarding proxy from the environment', () => {
  it('carries plain http to a host only it can reach, as curl sends it', async () => {
    const before = proxy.seen.length;
    const result = await svc(['keys', 'list', '--verbose'], {
      ...base(plain),
      SVC_BASE_URL: `http://svc.test:${plain.port}`,
      http_proxy: proxy.url,
      SVC_ALLOW_HTTP: '1',
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(proxy.seen.slice(before)).toEqual([`GET http://svc.test:${plain.port}/api/service/user/api-keys`]);
    expect(result.stderr).toContain(`* http://svc.test:${plain.port}: through the proxy ${proxy.url} (from http_proxy)`);
  });

  it('never takes http_proxy or HTTP_PROXY for https://, as curl does not, and says so under --verbose', async () => {
    const before = proxy.seen.length;
    const result = await svc(['keys', 'list', '--verbose'], {
      ...base(secure),
      SVC_BASE_URL: `https://svc.test:${secure.port}`,
      http_proxy: proxy.url,
      HTTP_PROXY: proxy.url,
    });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('host not found');
    expect(result.stderr).toContain(`* https://svc.test:${secure.port}: direct: neither HTTPS_PROXY or https_proxy nor ALL_PROXY is set`);
    expect(proxy.seen.length).toBe(before);
  });

  it('takes ALL_PROXY for https:// when HTTPS_PROXY is unset: the tunnel is asked of it', async () => {
    const before = proxy.seen.length;
    const result = await svc(['keys', 'list'], { ...base(secure), SVC_BASE_URL: `https://svc.test:${secure.port}`, ALL_PROXY: proxy.url });
    // Through the tunnel to the self-signed server, whose certificate this process does not trust.
    expect(result.stderr).toContain('self-signed');
    expect(proxy.seen.slice(before)).toEqual([`CONNECT svc.test:${secure.port}`]);
  });

  it('names a proxy that does not answer as the proxy, once, never "is the server running?", never its credentials', async () => {
    const dead = new URL(await refusedUrl());
    for (const args of [['keys', 'list'], ['keys', 'create', 'ci']]) {
      const result = await svc(args, {
        ...base(plain),
        SVC_BASE_URL: 'https://svc.test',
        HTTPS_PROXY: `http://someone:s3cret-word@${dead.host}`,
      });
      expect(result.exitCode, result.stderr).toBe(1);
      expect(result.stderr).toContain(`could not reach the proxy ${dead.host} (from HTTPS_PROXY): connection refused`);
      expect(result.stderr).toContain('Not retried');
      expect(result.stderr).not.toMatch(/server running|serve --local|retrying|may have reached|s3cret-word/);
    }
  });

  it.each([
    ['a # in the password', 'http://someone:s3cret#word@PROXY'],
    ['a / in the password', 'http://someone:s3cret/word@PROXY'],
  ])('refuses a proxy URL with %s: one usage error naming the variable, no request, no password shown', async (_what, value) => {
    const before = proxy.seen.length;
    const result = await svc(['keys', 'list'], { ...base(plain), SVC_BASE_URL: 'https://svc.test', HTTPS_PROXY: value.replace('PROXY', new URL(proxy.url).host) });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('The proxy URL in HTTPS_PROXY cannot be used');
    expect(result.stderr).toContain('percent-encoded');
    expect(result.stderr).not.toMatch(/s3cret|word@|retrying|svc\.test/);
    expect(proxy.seen.length).toBe(before);
  });

  it('leaves alone a host NO_PROXY names: direct, where svc.test does not resolve, final at once', async () => {
    const before = proxy.seen.length;
    const result = await svc(['keys', 'list'], {
      ...base(plain),
      SVC_BASE_URL: `http://svc.test:${plain.port}`,
      http_proxy: proxy.url,
      NO_PROXY: 'example.com, .svc.test',
      SVC_ALLOW_HTTP: '1',
    });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('host not found');
    expect(result.stderr).not.toContain('retrying');
    expect(proxy.seen.length).toBe(before);
  });

  it('names the variable of a forwarding proxy that wants credentials (407), once', async () => {
    const asking = await startFaultServer((_req, res) => {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="proxy"', 'content-type': 'text/plain' });
      res.end('credentials first\n');
    });
    try {
      const result = await svc(['keys', 'list'], { ...base(plain), SVC_BASE_URL: `http://svc.test:${plain.port}`, http_proxy: asking.url, SVC_ALLOW_HTTP: '1' });
      expect(result.exitCode).toBe(1);
      expect(result.stderr).toContain(`the proxy in http_proxy (${asking.url}) wants credentials (407): put them in http_proxy as http://user:password@host:port`);
      expect(result.stderr).toContain('Not retried');
      expect(asking.seen).toEqual([`GET http://svc.test:${plain.port}/api/service/user/api-keys`]);
    } finally {
      await asking.close();
    }
  });

  it('never sends loopback through a proxy, even a dead one', async () => {
    const before = proxy.seen.length;
    for (const proxyUrl of [proxy.url, await refusedUrl()]) {
      const result = await svc(['keys', 'list'], { ...base(plain), SVC_BASE_URL: plain.url, http_proxy: proxyUrl, HTTPS_PROXY: proxyUrl, ALL_PROXY: proxyUrl });
      expect(result.exitCode, result.stderr).toBe(0);
    }
    expect(proxy.seen.length).toBe(before);
  });
});

describe('TLS', () => {
  it('a self-signed certificate: one attempt, the fix named, never "may have reached the server"', async () => {
    const before = secure.seen.length;
    for (const args of [['keys', 'list'], ['keys', 'create', 'x']]) {
      const result = await svc(args, { ...base(secure), SVC_BASE_URL: secure.url });
      expect(result.exitCode).toBe(1);
      expect(result.stderr).toContain('self-signed');
      expect(result.stderr).toContain('NODE_EXTRA_CA_CERTS');
      expect(result.stderr).not.toContain('retrying');
      expect(result.stderr).not.toContain('may have reached');
    }
    expect(secure.seen.length).toBe(before);
  });
});

describe('what comes back', () => {
  it.each(['gzip', 'deflate', 'br'] as const)('reads answers compressed with %s though it asked for identity', async (encoding) => {
    const server = await startSpecServer({ encoding });
    try {
      const env = { ...base(server), SVC_BASE_URL: server.url };
      const created = await svc(['keys', 'create', 'zipped'], env);
      expect(created.exitCode, created.stderr).toBe(0);
      expect(created.stdout).toBe([...server.keys.values()].find((k) => k.name === 'zipped')!.secret);
      expect(JSON.parse((await svc(['keys', 'list', '--json'], env)).stdout).keys).toHaveLength(2);
    } finally {
      await server.close();
    }
  });

  it('sends Accept-Encoding: identity', async () => {
    let asked: string | undefined;
    const server = await startFaultServer((req, res) => {
      asked = req.headers['accept-encoding'];
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"keys":[]}');
    });
    await svc(['keys', 'list'], { SVC_API_KEY: plain.apiKey, SVC_BASE_URL: server.url });
    await server.close();
    expect(asked).toBe('identity');
  });

  it('reports a redirect with its Location and does not follow it', async () => {
    const server = await startFaultServer((_req, res) => {
      res.writeHead(301, { location: 'https://api.example.com/api/service/user/api-keys' });
      res.end();
    });
    const result = await svc(['keys', 'list'], { SVC_API_KEY: plain.apiKey, SVC_BASE_URL: server.url });
    await server.close();
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('answered 301, a redirect to https://api.example.com/api/service/user/api-keys');
    expect(server.seen).toHaveLength(1);
  });

  it('abandons an answer over 16 MiB, once', async () => {
    const big = `{"keys":[],"pad":"${'x'.repeat(17 * 1024 * 1024)}"}`;
    const server = await startFaultServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(big);
    });
    const result = await svc(['keys', 'list'], { SVC_API_KEY: plain.apiKey, SVC_BASE_URL: server.url });
    await server.close();
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('larger than 16 MiB');
    expect(server.seen).toHaveLength(1);
  });
});

describe('where a key may go', () => {
  it('SVC_API_KEY with a stray newline is trimmed; one with a header in it is refused before any request', async () => {
    const before = plain.seen.length;
    expect((await svc(['keys', 'list'], { SVC_API_KEY: `${plain.apiKey}\r\n`, SVC_BASE_URL: plain.url })).exitCode).toBe(0);
    const bad = await svc(['keys', 'list'], { SVC_API_KEY: `${plain.apiKey}\nX-Evil: 1`, SVC_BASE_URL: plain.url });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).not.toContain(plain.apiKey.slice(3));
    expect(plain.seen.length).toBe(before + 1);
  });

  it('refuses plain http to another machine before any request', async () => {
    const before = proxy.seen.length;
    const result = await svc(['keys', 'list'], { ...base(plain), SVC_BASE_URL: `http://svc.test:${plain.port}`, http_proxy: proxy.url });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('SVC_ALLOW_HTTP=1');
    expect(proxy.seen.length).toBe(before);
  });

  it('keeps a saved key to the server it was saved for', async () => {
    const other = await startSpecServer();
    const dir = tempConfigDir();
    try {
      const login = await svc(['login', '--with-key'], { SVC_CONFIG_DIR: dir.dir, SVC_BASE_URL: plain.url }, { input: plain.apiKey });
      expect(login.exitCode, login.stderr).toBe(0);
      expect((await svc(['keys', 'list'], { SVC_CONFIG_DIR: dir.dir })).exitCode).toBe(0);
      const elsewhere = await svc(['keys', 'list', '--base-url', other.url], { SVC_CONFIG_DIR: dir.dir });
      expect(elsewhere.exitCode).toBe(3);
      expect(elsewhere.stderr).toContain(`belongs to ${plain.url}, but --base-url points at ${other.url}`);
      expect(other.seen).toEqual([]);
    } finally {
      await other.close();
      dir.remove();
    }
  });
});
