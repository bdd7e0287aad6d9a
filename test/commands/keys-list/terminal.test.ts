// tier: in-process
import { describe, expect, it } from 'vitest';
import { useCommandTest } from '../../helpers/command-test.js';

const { onTerminal } = useCommandTest({ plan: 'pro' });

describe('on a terminal', () => {
  it('keys list draws a table, marks the key in use, and says when nothing matches', async () => {
    const table = await onTerminal(['keys', 'list']);
    expect(table.stdout).toMatch(/^ID +NAME +KEY +STATUS +WORKSPACE +CREATED +EXPIRES +LAST USED$/m);
    expect(table.stdout).toMatch(/^\* key_\S+ +bootstrap +sk_\S+ +enabled /m);
    expect(table.stderr).toContain('* the key svc is using');
    const none = await onTerminal(['keys', 'list', '--name', 'no-such-key']);
    expect(none.stderr).toContain('No key matches.');
  });
});
