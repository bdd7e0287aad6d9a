// tier: in-process
/**
 * Exact names (docs/contract.md §C2, §C8): `keys list --name` is a part of
 * the name in any case, `--name-exact` the whole name; `keys revoke --name
 * NAME` acts on the keys named exactly NAME, several only with --all, and
 * none at all when the list could not be read whole.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { call, svc, tempConfigDir } from '../../helpers/in-process.js';
import { useCommandTest } from '../../helpers/command-test.js';
import { startSpecServer, type SpecServer } from '../../helpers/spec-server.js';

const local = useCommandTest({ plan: 'pro' });

const create = async (name: string) => (await local.create(name)).id;

async function listed(...args: string[]): Promise<string[]> {
  const result = await svc(['keys', 'list', '--json', ...args], local.env);
  expect(result.exitCode, result.stderr).toBe(0);
  return (JSON.parse(result.stdout) as { keys: { id: string }[] }).keys.map((key) => key.id);
}

describe('keys revoke --name', () => {
  it('--all --yes revokes every key named exactly NAME, and no key whose name only contains it', async () => {
    const twice = [await create('pr-8'), await create('pr-8')];
    const longer = await create('pr-88');
    const result = await svc(['keys', 'revoke', '--name', 'pr-8', '--all', '--yes'], local.env);
    expect(result.exitCode, result.stderr).toBe(0);
    for (const id of twice) expect(result.stderr).toContain(`Revoked 'pr-8' (${id})`);
    const left = await listed();
    expect(left).not.toContain(twice[0]);
    expect(left).not.toContain(twice[1]);
    expect(left).toContain(longer);
  });

  it('one key of that name: revoked without --all', async () => {
    const id = await create('pr-9');
    const result = await svc(['keys', 'revoke', '--name', 'pr-9', '--yes', '--json'], local.env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).changed).toEqual([expect.objectContaining({ id })]);
    expect(await listed()).not.toContain(id);
  });

  it('several without --all: a usage error (exit 2) that lists them, and nothing revoked', async () => {
    const twice = [await create('pr-10'), await create('pr-10')];
    const result = await svc(['keys', 'revoke', '--name', 'pr-10', '--yes'], local.env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("'pr-10' is the name of 2 keys");
    for (const id of twice) expect(result.stderr).toContain(id);
    expect(result.stderr).toContain('svc keys revoke --name pr-10 --all');
    expect(await listed()).toEqual(expect.arrayContaining(twice));
  });

  it('no key of that name: exit 4; with --if-exists, 0', async () => {
    await create('pr-11-longer');
    const result = await svc(['keys', 'revoke', '--name', 'pr-11', '--yes'], local.env);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain("No key is named 'pr-11' (exactly;");
    expect((await svc(['keys', 'revoke', '--name', 'pr-11', '--yes', '--if-exists'], local.env)).exitCode).toBe(0);
  });

  it('refuses ids with --name, --all without --name, and no --yes where nobody can be asked (exit 2)', async () => {
    const id = await create('pr-12');
    for (const args of [['--name', 'pr-12', id, '--yes'], [id, '--all', '--yes'], ['--name', 'pr-12', '--all']]) {
      expect((await svc(['keys', 'revoke', ...args], local.env)).exitCode).toBe(2);
    }
    expect(await listed()).toContain(id);
  });

  it('the key list could not be read (listAllKeys fails): nothing is revoked', async () => {
    const id = await create('pr-13');
    await call(local.server.url, 'POST', '/_local/faults', local.server.adminToken, {
      rules: [{ method: 'GET', path: '/user/api-keys', then: 'status', status: 500, times: 10 }],
    });
    const result = await svc(['keys', 'revoke', '--name', 'pr-13', '--all', '--yes'], local.env);
    await call(local.server.url, 'DELETE', '/_local/faults', local.server.adminToken);
    expect(result.exitCode).toBe(1);
    expect(await listed()).toContain(id);
  });
});

describe('keys revoke --name, against a list svc could not read whole', () => {
  const config = tempConfigDir();
  let server: SpecServer;
  afterEach(() => server?.close());

  it('revokes nothing and says why, exit 1, even where the pages read show the name', async () => {
    // Pages of 2 with a next_page_token svc does not know how to send back: keys may lie past the first page.
    server = await startSpecServer({ pages: { size: 2, style: 'token' } });
    const env = { SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey, SVC_CONFIG_DIR: config.dir };
    server.addKey('pr-7');
    server.addKey('filler');
    server.addKey('pr-7');
    const result = await svc(['keys', 'revoke', '--name', 'pr-7', '--all', '--yes'], env);
    expect(result.exitCode, result.stderr).toBe(1);
    expect(result.stderr).toContain('could not read the whole key list');
    expect(result.stderr).toContain("'pr-7' may name a key it did not see");
    expect(server.seen.filter((r) => r.startsWith('DELETE'))).toEqual([]);
  });
});
