// tier: in-process
/**
 * One way to name a key in every command (issue 25, 3): view, enable,
 * disable, rotate and revoke take ids (trimmed), open the same aligned
 * picker on a terminal when none is given, say the same usage line
 * elsewhere, and take the name of exactly one key for its id.
 */
import { describe, expect, it } from 'vitest';
import { svc } from '../../helpers/in-process.js';
import { useCommandTest } from '../../helpers/command-test.js';

const local = useCommandTest({ plan: 'pro' });
const { create } = local;


describe('several ids', () => {
  it('keys disable and enable take several, like revoke; one not found is reported after the others (exit 4)', async () => {
    const [a, b] = [await create('many-a'), await create('many-b')];
    const off = await svc(['keys', 'disable', a.id, 'key_nope', b.id], local.env);
    expect(off.exitCode).toBe(4);
    expect(off.stderr).toBe(
      [
        `✓ Disabled ${a.id} (many-a).`,
        `✓ Disabled ${b.id} (many-b).`,
        'error: No key with id or name key_nope: it never existed, belongs to another user, or was already revoked.',
      ].join('\n'),
    );
    const on = await svc(['keys', 'enable', a.id, b.id, '--json'], local.env);
    expect(on.exitCode, on.stderr).toBe(0);
    expect(JSON.parse(on.stdout).changed.map((doc: { id: string; enabled: boolean }) => [doc.id, doc.enabled])).toEqual([
      [a.id, true],
      [b.id, true],
    ]);
  });
});
