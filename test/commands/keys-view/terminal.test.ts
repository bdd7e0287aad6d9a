// tier: in-process
import { describe, expect, it } from 'vitest';
import { svc } from '../../helpers/in-process.js';
import { useCommandTest } from '../../helpers/command-test.js';

const local = useCommandTest({ plan: 'pro' });
const { create } = local;

describe('on a terminal', () => {
  it('keys view lays the record out with relative times and marks the key in use', async () => {
    const key = await create('viewed');
    const result = await svc(['keys', 'view', key.id], { ...local.env, SVC_API_KEY: key.secret }, { tty: true });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^ID +\S+$/m);
    expect(result.stdout).toMatch(/^Key +sk_\S+ {2}\(the key svc is using\)$/m);
    expect(result.stdout).toMatch(/^Created +\S+ \(just now\)$/m);
    expect(result.stdout).toMatch(/^Expires +never$/m);
  });
});
