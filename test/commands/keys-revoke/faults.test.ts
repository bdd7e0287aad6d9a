// tier: in-process
/**
 * How svc meets failures (docs/contract.md §C4), each made by a fault rule
 * on the real reference server (docs/contract.md §B): the server is ours, and
 * what is under test is the client's retrying, waiting and stopping. svc
 * runs in-process with a fake sleep, so its backoff takes no time.
 */
import { describe, expect, it } from 'vitest';
import { svc } from '../../helpers/in-process.js';
import { useFaultyServer } from '../../helpers/reference-faults.js';

const server = useFaultyServer();

async function keyNames(): Promise<string[]> {
  const result = await svc(['keys', 'list', '--json'], server.env);
  return JSON.parse(result.stdout).keys.map((k: { name: string }) => k.name);
}

describe('a revoke or disable whose answer was lost', () => {
  it.each([
    ['reset', { then: 'reset' }, null],
    ['502', { status: 502, body: 'html' }, 502],
  ])('a revoke done but answered by a %s is retried, finds it gone, and says so without claiming it revoked it, exit 0', async (_, rule, status) => {
    const created = JSON.parse((await svc(['keys', 'create', 'old', '--json'], server.env)).stdout).key;
    await server.fault({ method: 'DELETE', after: true, ...rule });
    const result = await svc(['keys', 'revoke', created.id, '--yes'], server.env);
    expect(result.exitCode, result.stderr).toBe(0);
    // Without a list svc cannot tell its own lost success from an id that never was (issue 36).
    expect(result.stderr).toContain(`${created.id} is gone: the answer to its revoke was lost and the retry found no such key`);
    // Then one look at the list, for a key that has the argument for its name.
    expect((await server.seen()).filter((line) => line.startsWith('DELETE')).slice(-2)).toEqual([
      `DELETE /user/api-keys/${created.id} ${status}`,
      `DELETE /user/api-keys/${created.id} 404`,
    ]);
    expect(await keyNames()).toEqual(['bootstrap']);
  });

  it('a disable done but unanswered: the retry finds it done and reports the change', async () => {
    const created = JSON.parse((await svc(['keys', 'create', 'old', '--json'], server.env)).stdout).key;
    await server.fault({ method: 'PATCH', then: 'hang', after: true });
    const result = await svc(['keys', 'disable', created.id, '--timeout', '300'], server.env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain(`Disabled ${created.id}`);
    const patches = (await server.seen()).filter((line) => line.startsWith('PATCH'));
    expect(patches).toEqual([`PATCH /user/api-keys/${created.id} null`, `PATCH /user/api-keys/${created.id} 204`]);
  });
});
