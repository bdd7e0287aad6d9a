// tier: in-process
/**
 * Issue 25's loose ends: methods `svc api` sends, `--quiet` on a new key,
 * one wording per state, help's defaults, an empty `login --with-key`, a
 * bare word that is an option's name.
 */
import { describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../../helpers/in-process.js';

const local = useLocalServer();

describe('svc login --with-key with nothing on stdin', () => {
  it('says stdin was empty and how to pass the key, not that it is no key', async () => {
    for (const input of [undefined, '', ' \n']) {
      const result = await svc(['login', '--with-key'], local.env, input === undefined ? {} : { input });
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toMatch(/^error: stdin was empty: --with-key reads the key from stdin\. Pipe it in \(`printenv KEY \| svc login --with-key`/);
      expect(result.stderr).not.toContain('That is not an API key');
    }
  });
});
