// tier: in-process
/**
 * Two `keys prune` at once over the same keys (two CI jobs cleaning up):
 * each --json document claims only the keys its own run revoked (the DELETE
 * answered 200), and a key the other run revoked first is `alreadyGone`.
 * So the union of the two `changed` is every key revoked, each claimed once.
 */
import { expect, it } from 'vitest';
import { createUndiciTransport, type Transport } from '../../../src/client/transport.js';
import { call, svc } from '../../helpers/in-process.js';
import { useCommandTest } from '../../helpers/command-test.js';

const local = useCommandTest({ plan: 'pro' });
const KEYS = 37;

/**
 * Transports that hold each run's first DELETE until both runs have
 * reached theirs: both have listed the same keys before either revokes
 * any, whatever the scheduling, so every key is one both try.
 */
function meetingAtTheFirstRevoke(runs: number): Transport[] {
  let waiting = 0;
  let release!: () => void;
  const allThere = new Promise<void>((resolve) => (release = resolve));
  return Array.from({ length: runs }, () => {
    const base = createUndiciTransport();
    let first = true;
    return async (req) => {
      if (req.method === 'DELETE' && first) {
        first = false;
        if (++waiting === runs) release();
        await allThere;
      }
      return base(req);
    };
  });
}

it('two prunes at once: each claims only the keys it revoked, and together every key once', async () => {
  const { url, apiKey } = local.server;
  const made: string[] = [];
  for (let i = 0; i < KEYS; i++) {
    const { json } = await call(url, 'POST', '/api/service/user/api-keys', apiKey!, { name: `stale-${i}` });
    made.push(json.id);
    await call(url, 'PATCH', `/api/service/user/api-keys/${json.id}`, apiKey!, { enabled: false });
  }
  const results = await Promise.all(
    meetingAtTheFirstRevoke(2).map((transport) => svc(['keys', 'prune', '--disabled', '--yes', '--json'], local.env, { deps: { transport } })),
  );
  const documents = results.map((result) => {
    expect(result.exitCode, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as { changed: { id: string; revoked: boolean }[]; alreadyGone: string[]; failed: unknown[]; matched: { id: string }[] };
  });
  const claimed = documents.flatMap((d) => d.changed.map((answer) => answer.id));
  expect(claimed.sort()).toEqual([...made].sort());
  expect(new Set(claimed).size).toBe(KEYS);
  for (const document of documents) {
    // Both set out to revoke every key, and each key is either this run's or the other's.
    expect(document.matched.map((record) => record.id).sort()).toEqual([...made].sort());
    expect([...document.changed.map((answer) => answer.id), ...document.alreadyGone].sort()).toEqual([...made].sort());
    expect(document.failed).toEqual([]);
  }
  const left = (await call(url, 'GET', '/api/service/user/api-keys', apiKey!)).json.keys as { id: string }[];
  expect(left.filter((key) => made.includes(key.id))).toEqual([]);
});
