// tier: process
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../helpers/certificate.js';
import { svc, tempConfigDir } from '../helpers/cli.js';
import { startForwardProxy, type ForwardProxy } from '../helpers/forward-proxy.js';
import { startSpecServer, type SpecServer } from '../helpers/spec-server.js';

// docs/contract.md §C1, §A1: a CA from NODE_EXTRA_CA_CERTS, which Node reads as
// the process starts, so only a spawned svc shows it.

const certificate = selfSignedCertificate();
const config = tempConfigDir();
let proxy: ForwardProxy;
let secure: SpecServer;
beforeAll(async () => {
  [proxy, secure] = await Promise.all([startForwardProxy(), startSpecServer({ tls: { cert: certificate.cert, key: certificate.key } })]);
});
afterAll(async () => {
  await Promise.all([proxy.close(), secure.close()]);
  certificate.remove();
  config.remove();
});

const base = (server: SpecServer) => ({ SVC_API_KEY: server.apiKey, SVC_CONFIG_DIR: config.dir });

describe('a CA from NODE_EXTRA_CA_CERTS', () => {
  it('tunnels https through CONNECT (lower-case https_proxy too), trusting a CA from NODE_EXTRA_CA_CERTS', async () => {
    const before = proxy.seen.length;
    const result = await svc(['keys', 'create', 'via-proxy'], {
      ...base(secure),
      SVC_BASE_URL: `https://svc.test:${secure.port}`,
      https_proxy: proxy.url,
      NODE_EXTRA_CA_CERTS: certificate.certFile,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe([...secure.keys.values()].find((k) => k.name === 'via-proxy')!.secret);
    expect(proxy.seen.slice(before)).toEqual([`CONNECT svc.test:${secure.port}`]);
  });

  it('works once NODE_EXTRA_CA_CERTS names the certificate', async () => {
    const result = await svc(['keys', 'list'], { ...base(secure), SVC_BASE_URL: secure.url, NODE_EXTRA_CA_CERTS: certificate.certFile });
    expect(result.exitCode, result.stderr).toBe(0);
  });
});

describe('plain http spoken to a TLS port', () => {
  it('says at once that the server speaks TLS and gives the https:// address, sending nothing and retrying nothing', async () => {
    const before = secure.seen.length;
    for (const args of [['keys', 'list'], ['keys', 'create', 'ci']]) {
      const result = await svc(args, { ...base(secure), SVC_BASE_URL: `http://127.0.0.1:${secure.port}` });
      expect(result.exitCode, args.join(' ')).toBe(1);
      expect(result.stderr).toContain(`the server speaks TLS, not plain http: try https://127.0.0.1:${secure.port} as the base URL`);
      expect(result.stderr).toContain('Not retried');
      expect(result.stderr).not.toMatch(/may have reached|closed before an answer|Retrying/);
    }
    expect(secure.seen.slice(before)).toEqual([]);
  });
});
