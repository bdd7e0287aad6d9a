// tier: in-process
/**
 * `keys disable` without --yes reads the key list to tell whether it would
 * disable the key svc is using. A list it cannot read (a server error, a
 * server without the list) does not stop the disable: svc says it cannot
 * tell, and disables as asked. A 401 ends it as anywhere.
 */
import { expect, it } from 'vitest';
import { svc } from '../../helpers/in-process.js';
import { useFaultyServer } from '../../helpers/reference-faults.js';

const server = useFaultyServer();

it.each([
  ['a server error', { status: 500, times: 0 }],
  ['no list on this server', { status: 404, body: 'html', times: 0 }],
])('a key list svc cannot read (%s): svc says it cannot tell, and disables the key', async (_, rule) => {
  const id = await server.makeKey('other');
  await server.fault({ method: 'GET', path: '/user/api-keys', ...rule });
  const result = await svc(['keys', 'disable', id, '--max-wait', '0'], server.env);
  expect(result.exitCode, result.stderr).toBe(0);
  expect(result.stderr).toMatch(/svc could not read the key list \(.+\), so it cannot tell whether a key it disables is the one it is using\./);
  expect(result.stderr).toContain(`Disabled ${id}`);
});
