// tier: in-process
/**
 * Narrow terminals and help (issue 25, 7): `svc help <any command path>`,
 * help laid out at the terminal's width and broken between words, and the
 * key table leaving out what does not fit at 40 columns.
 */
import { describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../../helpers/in-process.js';

const local = useLocalServer({ plan: 'pro' });

describe('keys list at 40 columns', () => {
  it('keeps the id and the name, cut to fit, and leaves the other columns out', async () => {
    await svc(['keys', 'create', 'a-name-much-longer-than-twelve'], local.env);
    const result = await svc(['keys', 'list'], local.env, { tty: true, columns: 40 });
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('ID                          NAME');
    expect(lines).toContain(lines.find((line) => line.includes('a-name-much…')));
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(40);
    // At 64 the hint and the state fit beside them, the long name cut shorter for them.
    expect((await svc(['keys', 'list'], local.env, { tty: true, columns: 64 })).stdout.split('\n')[0]).toMatch(/^ID +NAME +KEY +STATUS$/);
  });
});
