// tier: in-process
/**
 * Issue 36, against a server svc did not write (test/helpers/spec-server.ts):
 * the endpoints beyond the spec (GET /workspace, GET /user/api-keys/{id})
 * are optional, and what a gateway or framework answers for them means "not
 * here", with the list to fall back on; a 404 to a request naming a key is
 * "not found" whatever its body; JSON after a byte order mark is JSON.
 * docs/contract.md §C6.
 */
import { describe, expect, it } from 'vitest';
import { NOT_HERE, page } from '../../helpers/not-the-service.js';
import { useSpecServer } from '../../helpers/spec-server.js';
import { svc, tempConfigDir } from '../../helpers/in-process.js';

const config = tempConfigDir();
const spec = useSpecServer(config);
const { start } = spec;

describe('GET /workspace, which the spec does not define', () => {
  it.each(NOT_HERE)('answered with %s: svc status reads the list instead, exit 0', async (_, then) => {
    const env = await start({ workspace: { id: 'ws_1', name: 'Team' } });
    spec.server.rules.push({ method: 'GET', path: /^\/workspace$/, times: 1, work: false, then });
    const result = await svc(['status'], env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).not.toContain("the service's address?");
    expect(spec.server.seen).toContain('GET /api/service/user/api-keys');
  });

  it('a 401 there keeps its meaning: the key is rejected, exit 3', async () => {
    const env = await start({ workspace: { id: 'ws_1' } });
    spec.server.rules.push({ method: 'GET', path: /^\/workspace$/, times: 1, work: false, then: page(401, 'application/json', '{"error":"Unauthorized"}') });
    expect((await svc(['status'], env)).exitCode).toBe(3);
  });
});
