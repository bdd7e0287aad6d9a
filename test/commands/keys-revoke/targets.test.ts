// tier: in-process
/**
 * Issue 36: svc changes only the keys the person named, and leaves a key
 * alone when it cannot tell whether it is the key in use. Each case here
 * failed before the change that made it hold.
 */
import { describe, expect, it } from 'vitest';
import { svc, tempConfigDir } from '../../helpers/in-process.js';
import { useSpecServer } from '../../helpers/spec-server.js';

const config = tempConfigDir();
const spec = useSpecServer(config);
const { start } = spec;


describe('a revoke whose answer was lost, of an argument that is also a name', () => {
  it('is not reported gone while a key of that name lives: svc names it and exits 1', async () => {
    const env = await start();
    const ci = spec.server.addKey('ci');
    // The first DELETE, of an id nobody has, is answered 404 and the answer lost; the retry's 404 says only "no such id".
    for (const extra of [[], ['--if-exists']]) {
      spec.server.rules.push({ method: 'DELETE', times: 1, then: 'drop' });
      const result = await svc(['keys', 'revoke', 'ci', '--yes', ...extra], env);
      expect(result.exitCode, result.stderr).toBe(1);
      expect(result.stderr).not.toContain('is gone');
      expect(result.stderr).toContain(`A key named 'ci' still exists (${ci.id})`);
    }
    expect(spec.server.keys.has(ci.id)).toBe(true);
  });
});
