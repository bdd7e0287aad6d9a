// tier: in-process
/**
 * docs/contract.md §A5, issue 23: an account of 100,000 keys is listed
 * whole, a page of at most 1,000 keys at a time, by `svc keys list`, as
 * TSV and as one --json document. How long a page holds the event loop is
 * measured in bench/ (`npm run bench`, "keys list of 100,000 keys"), not here.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, startLocalServer, svc, type LocalServer } from '../helpers/in-process.js';
import { writeManyKeys } from '../helpers/many-keys.mjs';

const KEYS = 100_000;
const dir = mkdtempSync(join(tmpdir(), 'svc-many-keys-'));
let server: LocalServer;
let env: Record<string, string>;
beforeAll(async () => {
  const { secret } = writeManyKeys(join(dir, 'state.json'), { keys: KEYS });
  server = await startLocalServer({ dataFile: join(dir, 'state.json'), adminToken: 'admin' });
  env = { SVC_BASE_URL: server.url, SVC_API_KEY: secret, SVC_CONFIG_DIR: join(dir, 'config') };
}, 60_000);
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('lists 100,000 keys whole, in 100 pages of 1,000, as one --json document and as TSV', async () => {
  const json = await svc(['keys', 'list', '--json'], env);
  expect(json.exitCode, json.stderr).toBe(0);
  const keys = JSON.parse(json.stdout).keys as { id: string; name: string }[];
  expect(keys).toHaveLength(KEYS);
  expect(new Set(keys.map((k) => k.id)).size).toBe(KEYS);
  expect([keys[0]!.name, keys.at(-1)!.name]).toEqual([`key ${KEYS}`, 'key 1']);

  const tsv = await svc(['keys', 'list', '--status', 'disabled'], env);
  expect(tsv.exitCode, tsv.stderr).toBe(0);
  expect(tsv.stdout.split('\n')).toHaveLength(KEYS / 10 + 1);

  const log = await call(server.url, 'GET', '/_local/requests?limit=1000', 'admin');
  const lists = (log.json.requests as { method: string; path: string; status: number }[]).filter((r) => r.path === '/api/service/user/api-keys');
  expect(lists).toHaveLength(200);
  expect(lists.every((r) => r.status === 200)).toBe(true);
}, 120_000);
