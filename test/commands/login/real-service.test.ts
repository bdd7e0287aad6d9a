// tier: in-process
/**
 * Issue 23, against a server svc did not write (test/helpers/spec-server.ts):
 * lists in pages of every common style and either order, other spellings
 * of a record's fields, creates committed late, connections dropped as they
 * are reused, 503s and 429s as services send them, error bodies with
 * details, and TLS spoken to a plain-http port. docs/contract.md §C3, §C4, §C6.
 */
import { describe, expect, it } from 'vitest';
import { useSpecServer, type SpecKey } from '../../helpers/spec-server.js';
import { svc, tempConfigDir } from '../../helpers/in-process.js';

const config = tempConfigDir();
const DAY = 86_400_000;
const spec = useSpecServer(config);
const { start } = spec;

/** `count` keys besides the bootstrap one, made oldest first: key-1 … key-N. Key 3 and every tenth after it up to key 63 have expired. */
function fill(count: number): SpecKey[] {
  return Array.from({ length: count }, (_, i) => spec.server.addKey(`key-${i + 1}`, i % 10 === 2 && i < 70 ? Date.now() - DAY : null));
}


describe('login against a list whose later pages svc cannot follow', () => {
  it.each([
    ['a second page that names itself as the next', 'cursor-loop', /its page 3 is one it sent before/],
    ['a next page on another host', 'foreign-link', /its next page is at another address \(https:\/\/elsewhere\.test\//],
  ] as const)('%s: the first page proves the key; login saves it and says the list could not be read whole', async (_, style, why) => {
    const env = await start({ pages: { size: 2, style } });
    fill(4);
    const own = tempConfigDir();
    try {
      const login = await svc(['login', '--with-key'], { SVC_BASE_URL: env.SVC_BASE_URL, SVC_CONFIG_DIR: own.dir }, { input: spec.server.apiKey });
      expect(login.exitCode, login.stderr).toBe(0);
      expect(login.stderr).toContain("saved to profile 'default'");
      expect(login.stderr).toContain('The key list could not be read whole: ');
      expect(login.stderr).toMatch(why);
      expect(login.stderr).toContain('The key works and is saved');
      const ping = await svc(['keys', 'ping'], { SVC_BASE_URL: env.SVC_BASE_URL, SVC_CONFIG_DIR: own.dir });
      expect(ping.exitCode, ping.stderr).toBe(0);
    } finally {
      own.remove();
    }
  });
});
