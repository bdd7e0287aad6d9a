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
import { KEY_PATH, NOT_HERE, page } from '../helpers/not-the-service.js';
import { useSpecServer } from '../helpers/spec-server.js';
import { svc, tempConfigDir } from '../helpers/in-process.js';

const config = tempConfigDir();
const spec = useSpecServer(config);
const { start } = spec;

describe('a 404 that is not JSON to a request naming a key', () => {
  it.each([
    ['revoke', 'DELETE', ['keys', 'revoke', 'k_missing', '--yes']],
    ['disable', 'PATCH', ['keys', 'disable', 'k_missing']],
    ['enable', 'PATCH', ['keys', 'enable', 'k_missing']],
  ])('%s of an id the server does not know: not found, exit 4', async (_, method, args) => {
    const env = await start();
    spec.server.rules.push({ method, path: KEY_PATH, times: 1, work: false, then: NOT_HERE[0]![1] });
    const result = await svc(args, env);
    expect(result.exitCode, result.stderr).toBe(4);
    expect(result.stderr).toContain('No key with id or name k_missing');
    expect(result.stderr).not.toContain("the service's address?");
  });
});

describe('JSON after a byte order mark', () => {
  it('in a list: read as the JSON it is', async () => {
    const env = await start();
    spec.server.rules.push({ method: 'GET', path: /^\/user\/api-keys$/, times: 1, work: false, then: page(200, 'application/json', '\uFEFF{"keys":[{"id":"k1","name":"marked"}]}') });
    const result = await svc(['keys', 'list'], env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('marked');
  });

  it("in a create's answer: the secret is found and shown", async () => {
    const env = await start();
    const secret = `sk_${'B'.repeat(64)}`;
    spec.server.rules.push({ method: 'POST', times: 1, work: false, then: page(201, 'application/json', `\uFEFF{"id":"k9","name":"ci","secret":"${secret}"}`) });
    const result = await svc(['keys', 'create', 'ci'], env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe(secret);
  });

  it('in an error body: its message is shown and its status keeps its exit code', async () => {
    const env = await start();
    spec.server.rules.push({ method: 'POST', times: 1, work: false, then: page(422, 'application/json', '\uFEFF{"error":"name is taken","code":"NAME_TAKEN"}') });
    const result = await svc(['keys', 'create', 'ci'], env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('name is taken');
  });
});
