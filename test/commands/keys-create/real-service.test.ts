// tier: in-process
/**
 * Issue 23, against a server svc did not write (test/helpers/spec-server.ts):
 * lists in pages of every common style and either order, other spellings
 * of a record's fields, creates committed late, connections dropped as they
 * are reused, 503s and 429s as services send them, error bodies with
 * details, and TLS spoken to a plain-http port. docs/contract.md §C3, §C4, §C6.
 */
import { describe, expect, it } from 'vitest';
import { records, useSpecServer, type SpecKey } from '../../helpers/spec-server.js';
import { svc, tempConfigDir } from '../../helpers/in-process.js';

const config = tempConfigDir();
const DAY = 86_400_000;
const spec = useSpecServer(config);
const { start } = spec;

/** `count` keys besides the bootstrap one, made oldest first: key-1 … key-N. Key 3 and every tenth after it up to key 63 have expired. */
function fill(count: number): SpecKey[] {
  return Array.from({ length: count }, (_, i) => spec.server.addKey(`key-${i + 1}`, i % 10 === 2 && i < 70 ? Date.now() - DAY : null));
}


describe('the look for a lost create', () => {
  it('finds the key on the last page of an oldest-first list, named `label` and dated `created`', async () => {
    const env = await start({ pages: { size: 20, style: 'cursor' }, order: 'oldest-first', record: records.labelled });
    fill(30);
    spec.server.rules.push({ method: 'POST', times: 1, then: 'drop' });
    const result = await svc(['keys', 'create', 'nightly', '--expires-in', '1d'], env);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("It did take effect: a key named 'nightly' appeared since the request began, made by this create");
    expect(result.stderr).toMatch(/created \S+ {2}revoked now/);
    expect(spec.server.keys.size).toBe(31);
  });

  it('against a server that commits late: "not found yet", and where to look in a minute', async () => {
    const env = await start({ lateCommit: true });
    spec.server.rules.push({ method: 'POST', times: 1, then: 'drop' });
    const result = await svc(['keys', 'create', 'late one'], env);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("No key named 'late one' made since the request began is in the list yet");
    expect(result.stderr).toContain("the server may still be creating it:\ncheck `svc keys list --name 'late one'` in a minute");
    expect(result.stderr).not.toMatch(/did not take effect|most likely/);
    spec.server.commitPending();
    const later = await svc(['keys', 'list', '--name', 'late one', '--json'], env);
    expect(JSON.parse(later.stdout).keys).toHaveLength(1);
  });

  it('names the same-named keys whose creation time it cannot read, and counts the nameless', async () => {
    const env = await start({ record: records.bare });
    const older = spec.server.addKey('ci');
    spec.server.rules.push({ method: 'POST', times: 1, then: 'drop', work: false });
    const result = await svc(['keys', 'create', 'ci'], env);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("A key named 'ci' shows no creation time svc can read; it may be the one:");
    expect(result.stderr).toContain(`svc keys revoke ${older.id}`);
  });
});
