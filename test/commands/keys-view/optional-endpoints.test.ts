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
import { KEY_PATH, NOT_HERE } from '../../helpers/not-the-service.js';
import { useSpecServer } from '../../helpers/spec-server.js';
import { svc, tempConfigDir } from '../../helpers/in-process.js';

const config = tempConfigDir();
const spec = useSpecServer(config);
const { start } = spec;

describe('GET /user/api-keys/{id}, which the spec does not define', () => {
  it.each(NOT_HERE)('answered with %s: keys view finds the key in the list, exit 0', async (_, then) => {
    const env = await start({ getOne: true });
    const key = spec.server.addKey('listed');
    spec.server.rules.push({ method: 'GET', path: KEY_PATH, times: 1, work: false, then });
    const result = await svc(['keys', 'view', key.id], env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('listed');
  });

  it('answered with an HTML 404 for a key that is not in the list either: not found, exit 4', async () => {
    const env = await start({ getOne: true });
    spec.server.rules.push({ method: 'GET', path: KEY_PATH, times: 1, work: false, then: NOT_HERE[0]![1] });
    const result = await svc(['keys', 'view', 'k_missing'], env);
    expect(result.exitCode, result.stderr).toBe(4);
    expect(result.stderr).toContain('No key with id or name k_missing');
  });
});
