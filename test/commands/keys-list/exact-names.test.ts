// tier: in-process
/**
 * Exact names (docs/contract.md §C2, §C8): `keys list --name` is a part of
 * the name in any case, `--name-exact` the whole name; `keys revoke --name
 * NAME` acts on the keys named exactly NAME, several only with --all, and
 * none at all when the list could not be read whole.
 */
import { describe, expect, it } from 'vitest';
import { svc } from '../../helpers/in-process.js';
import { useCommandTest } from '../../helpers/command-test.js';

const local = useCommandTest({ plan: 'pro' });

const create = async (name: string) => (await local.create(name)).id;

async function listed(...args: string[]): Promise<string[]> {
  const result = await svc(['keys', 'list', '--json', ...args], local.env);
  expect(result.exitCode, result.stderr).toBe(0);
  return (JSON.parse(result.stdout) as { keys: { id: string }[] }).keys.map((key) => key.id);
}

describe('keys list', () => {
  it('--name is a part of the name, any case; --name-exact the whole name, in its case', async () => {
    const [seven, seventySeven, upper] = [await create('pr-7'), await create('pr-77'), await create('PR-7')];
    expect(await listed('--name', 'pr-7')).toEqual(expect.arrayContaining([seven, seventySeven, upper]));
    expect(await listed('--name-exact', 'pr-7')).toEqual([seven]);
    expect(await listed('--name-exact', 'pr')).toEqual([]);
  });
});
