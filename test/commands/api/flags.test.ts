// tier: in-process
/**
 * Issue 25's loose ends: methods `svc api` sends, `--quiet` on a new key,
 * one wording per state, help's defaults, an empty `login --with-key`, a
 * bare word that is an option's name.
 */
import { describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../../helpers/in-process.js';

const local = useLocalServer();
/** Nothing listens here: a request that went out would fail with exit 1, not a usage error. */
const NOWHERE = { SVC_BASE_URL: 'http://127.0.0.1:9', SVC_API_KEY: `sk_${'a'.repeat(64)}` };

describe('svc api -X', () => {
  it('refuses a method that is no HTTP method, before any request, with the nearest and the list', async () => {
    const result = await svc(['api', '-X', 'GETT', '/workspace'], NOWHERE);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe("error: 'GETT' is not an HTTP method. Did you mean GET?\n-X takes one of GET, POST, PUT, PATCH, DELETE.");
    expect(result.stdout).toBe('');
  });

  it('refuses a word no method is near, and one only shaped like a method', async () => {
    for (const method of ['FROB', 'TRACE', 'CONNECT']) {
      const result = await svc(['api', '-X', method, '/workspace'], NOWHERE);
      expect(result.exitCode, method).toBe(2);
      expect(result.stderr).toContain(`'${method}' is not an HTTP method.`);
    }
  });

  it('sends a known method in any case', async () => {
    const result = await svc(['api', '-X', 'get', '/workspace'], local.env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).id).toBe(local.server.workspaceId);
  });
});
