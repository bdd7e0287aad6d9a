// tier: process
/**
 * docs/contract.md §C4: a proxy that will not open the CONNECT tunnel to an
 * https service (407, 403, 502, or the connection closed) ends the command
 * at once: one attempt, the proxy's answer named, never a loop of
 * connections (undici reconnects for ever after a closed CONNECT, deaf to
 * --timeout), never "may have reached the server". The proxy is a process
 * of its own (test/helpers/refusing-proxy.mjs), as squid or tinyproxy would be.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../helpers/certificate.js';
import { cleanEnv, svc } from '../helpers/cli.js';

const PROXY = fileURLToPath(new URL('../helpers/refusing-proxy.mjs', import.meta.url));
const KEY = `sk_${'k'.repeat(64)}`;

interface RefusingProxy {
  url: string;
  /** The CONNECT requests it was asked for so far, one line each. */
  connects(): string[];
  child: ChildProcess;
}

let running: RefusingProxy | undefined;
afterEach(() => {
  running?.child.kill('SIGTERM');
  running = undefined;
});

async function startProxy(mode: string): Promise<RefusingProxy> {
  const child = spawn(process.execPath, [PROXY, mode], { env: cleanEnv() as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', () => {
      if (out.includes('\n')) resolve(JSON.parse(out.slice(0, out.indexOf('\n'))).url);
    });
    child.once('exit', (code) => reject(new Error(`the proxy exited ${code}`)));
  });
  running = { url, child, connects: () => out.split('\n').filter((line) => line.startsWith('CONNECT ')) };
  return running;
}

const run = (args: string[], proxy: string) =>
  svc([...args, '--timeout', '5000'], { SVC_BASE_URL: 'https://svc.test', SVC_API_KEY: KEY, HTTPS_PROXY: proxy });

describe.each([
  ['407', 'the proxy in HTTPS_PROXY (http://127.0.0.1:PORT) wants credentials (407 to CONNECT): put them in HTTPS_PROXY as http://user:password@host:port'],
  ['403', 'the proxy in HTTPS_PROXY (http://127.0.0.1:PORT) does not allow a tunnel to svc.test:443 (403 to CONNECT)'],
  ['502', 'the proxy in HTTPS_PROXY (http://127.0.0.1:PORT) could not reach svc.test:443 (502 to CONNECT)'],
  ['close', 'the proxy in HTTPS_PROXY (http://127.0.0.1:PORT) closed the connection when asked for a tunnel to svc.test:443 (CONNECT)'],
])('a proxy answering CONNECT with %s', (mode, message) => {
  it.each([[['keys', 'list']], [['keys', 'create', 'ci']]])('svc %j: one attempt, the proxy named, exit 1', async (args) => {
    const proxy = await startProxy(mode);
    const result = await run(args, proxy.url);
    expect(result.exitCode, result.stderr).toBe(1);
    expect(result.stderr).toContain(message.replace('PORT', new URL(proxy.url).port));
    expect(result.stderr).toContain('Not retried');
    expect(result.stderr).not.toMatch(/may have reached|no answer within|!== 200/);
    expect(proxy.connects()).toEqual(['CONNECT svc.test:443']);
  });
});

it('a 407 to credentials already given says they were not accepted, and never shows them', async () => {
  const proxy = await startProxy('407');
  const withCredentials = proxy.url.replace('http://', 'http://someone:s3cret-word@');
  const result = await run(['keys', 'list'], withCredentials);
  expect(result.exitCode).toBe(1);
  expect(result.stderr).toContain(`the proxy in HTTPS_PROXY (${proxy.url}) did not accept the credentials in HTTPS_PROXY (407 to CONNECT)`);
  expect(result.stderr).not.toContain('s3cret-word');
  expect(proxy.connects()).toHaveLength(1);
});

it('an https:// proxy by IP address whose own certificate is not trusted is named as the proxy, with no warning of Node about its address', async () => {
  const certificate = selfSignedCertificate();
  const server = createTlsServer({ cert: certificate.cert, key: certificate.key }, (socket) => socket.destroy());
  try {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const result = await run(['keys', 'list'], `https://127.0.0.1:${port}`);
    expect(result.exitCode, result.stderr).toBe(1);
    expect(result.stderr).toContain(`could not reach the proxy 127.0.0.1:${port} (from HTTPS_PROXY): the proxy's certificate is self-signed and not trusted`);
    expect(result.stderr).not.toMatch(/server's certificate|DeprecationWarning|DEP0123/);
  } finally {
    server.close();
    certificate.remove();
  }
});
