// tier: in-process
/**
 * A reference server that ran without --data forgets every key when it
 * stops (issue 25, 5): the 401 its restart gives the saved key says so,
 * and which key works now.
 */
import { describe, expect, it } from 'vitest';
import { startLocalServer, svc, tempConfigDir } from '../helpers/in-process.js';

describe('after an in-memory reference server restarts', () => {
  it("the saved key's 401 says the server forgot its keys, and the new banner's key works", async () => {
    const config = tempConfigDir();
    let server = await startLocalServer();
    try {
      const env = { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: server.url };
      expect((await svc(['login', '--with-key'], env, { input: server.apiKey! })).exitCode).toBe(0);
      const port = Number(new URL(server.url).port);
      await server.stop();
      server = await startLocalServer({ port });
      const result = await svc(['keys', 'list'], env);
      expect(result.exitCode).toBe(3);
      expect(result.stderr).toContain(
        'If that is `svc serve --local` and it ran without --data, it forgot every key when it stopped: since its restart only the API key its banner printed works.',
      );
      expect(result.stderr.split('\n').at(-1)).toMatch(/^Next: run `svc login` with a working key/);
      expect((await svc(['login', '--with-key'], env, { input: server.apiKey! })).exitCode).toBe(0);
      expect((await svc(['keys', 'list'], env)).exitCode).toBe(0);
    } finally {
      await server.stop();
      config.remove();
    }
  });
});
