// tier: in-process
/**
 * Issue 25's loose ends: methods `svc api` sends, `--quiet` on a new key,
 * one wording per state, help's defaults, an empty `login --with-key`, a
 * bare word that is an option's name.
 */
import { describe, expect, it } from 'vitest';
import { svc } from '../../helpers/in-process.js';


describe("help's defaults", () => {
  const paths = [[], ['keys', 'list'], ['keys', 'create'], ['keys', 'rotate'], ['keys', 'prune'], ['api'], ['serve'], ['login'], ['status']];

  it('are written one way, as commander writes them: (default: value), unquoted', async () => {
    for (const path of paths) {
      const help = (await svc([...path, '--help'], {})).stdout.replace(/\s+/g, ' ');
      expect(help, path.join(' ')).not.toMatch(/\bdefault\s+["\d]|default: "/);
      expect(help).toContain('(default: 300)');
    }
    expect((await svc(['--help'], {})).stdout.replace(/\s+/g, ' ')).toContain('in milliseconds (default: 10000;');
    const serve = (await svc(['serve', '--help'], {})).stdout.replace(/\s+/g, ' ');
    for (const shown of ['(default: 127.0.0.1)', '(default: 8787)', '(default: free)', '(default: 1000)']) expect(serve).toContain(shown);
  });
});
