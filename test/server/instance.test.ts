// tier: in-process
/**
 * Svc-Server-Instance (docs/contract.md §B): every answer names the run
 * that gave it; a server in memory is a new run at each start, one with
 * --data the same run on every start on that file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestServer } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-instance-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Svc-Server-Instance', () => {
  it('is on every answer, the same for each, whatever the status or area', async () => {
    const t = await startTestServer();
    try {
      const answers = [
        await t.api('GET', '/workspace'),
        await t.api('GET', '/workspace', { key: null }),
        await t.api('GET', '/nowhere'),
        await t.api('POST', '/user/api-keys', { body: { name: 7 } }),
        await t.admin('GET', '/requests'),
      ];
      expect(answers.map((a) => a.status)).toEqual([200, 401, 404, 400, 200]);
      const seen = new Set(answers.map((a) => a.headers['svc-server-instance']));
      expect(seen.size).toBe(1);
      expect([...seen][0]).toMatch(/^mem-[0-9a-f]{16}$/);
    } finally {
      await t.close();
    }
  });

  it('in memory, is new at each start', async () => {
    const instances = [];
    for (let i = 0; i < 2; i++) {
      const t = await startTestServer();
      instances.push((await t.api('GET', '/workspace')).headers['svc-server-instance']);
      await t.close();
    }
    expect(instances[0]).not.toBe(instances[1]);
  });

  it('with --data, is the same on every start on one file, and differs for another file', async () => {
    const instanceOf = async (dataFile: string) => {
      const t = await startTestServer({ dataFile });
      try {
        return (await t.api('GET', '/workspace')).headers['svc-server-instance'];
      } finally {
        await t.close();
      }
    };
    const first = await instanceOf(join(dir, 'a.json'));
    expect(first).toMatch(/^data-[0-9a-f]{16}$/);
    expect(await instanceOf(join(dir, 'a.json'))).toBe(first);
    expect(await instanceOf(join(dir, 'b.json'))).not.toBe(first);
  });
});
