// tier: process
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, svc, tempConfigDir, windowEndsIn } from '../helpers/cli.js';
import { startLocalServer, type LocalServer } from '../helpers/in-process.js';

/** What only a process shows: a signal during a rate-limit wait. */
describe('Ctrl-C', () => {
  const config = tempConfigDir();
  let limited: LocalServer;
  beforeAll(async () => {
    limited = await startLocalServer();
  });
  afterAll(async () => {
    await limited?.stop();
    config.remove();
  });

  it('during a rate-limit wait exits 130 at once', async () => {
    await windowEndsIn(limited, 30);
    while ((await call(limited.url, 'GET', '/api/service/user/api-keys', limited.apiKey!)).status !== 429);
    const child = svc(['keys', 'list'], { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: limited.url, SVC_API_KEY: limited.apiKey! });
    let stderr = '';
    child.stderr!.on('data', (c) => {
      stderr += String(c);
      if (stderr.includes('retrying in')) child.kill('SIGINT');
    });
    const result = await child;
    expect(result.exitCode).toBe(130);
  });
});

/**
 * A signal no command waits through ends svc with 128 + its number; under
 * --json stdout still holds one document, the error (issue 38), as for any
 * other failure.
 */
describe('a signal while a request is out', () => {
  const config = tempConfigDir();
  let held: LocalServer;
  beforeAll(async () => {
    held = await startLocalServer();
    await call(held.url, 'POST', '/_local/faults', held.adminToken, { rules: [{ then: 'hang', times: 0 }] });
  });
  afterAll(async () => {
    await held?.stop();
    config.remove();
  });

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const)('%s: exit %i, and under --json the error document on stdout', async (signal, code) => {
    for (const json of [false, true]) {
      const child = svc([...(json ? ['--json'] : []), '--verbose', '--timeout', '60000', 'keys', 'list'], { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: held.url, SVC_API_KEY: held.apiKey! });
      // --verbose says when the request goes out; the server holds it.
      await new Promise<void>((resolve) => {
        let stderr = '';
        child.stderr!.on('data', (chunk) => {
          stderr += String(chunk);
          if (stderr.includes('> GET')) resolve();
        });
      });
      child.kill(signal);
      const result = await child;
      expect(result.exitCode).toBe(code);
      if (json) expect(JSON.parse(result.stdout)).toEqual({ error: { message: `Stopped by ${signal} before the command was done.`, exitCode: code } });
      else expect(result.stdout).toBe('');
    }
  });
});
