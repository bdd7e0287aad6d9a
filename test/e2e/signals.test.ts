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
