// tier: in-process
/**
 * The interactive manager's actions in-process: a TTY IO and a scripted
 * prompter stand in for the person. What only a real terminal shows (keys,
 * screen, resize) is in test/e2e/interactive.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { tempConfigDir } from '../../helpers/in-process.js';
import { useCommandTest } from '../../helpers/command-test.js';
import type { Step } from '../../helpers/prompter.js';
import { records, startSpecServer } from '../../helpers/spec-server.js';

const local = useCommandTest({ plan: 'pro' });

/** The manager (or `args`) on a terminal tall enough for its whole screen. */
const session = (script: Step[], env: Record<string, string | undefined> = local.env, args: string[] = []) => local.onTerminal(args, script, { rows: 60, env });

describe('pick-lists', () => {
  it('offer only keys a request can name: not an id of half a surrogate pair, nor `.`', async () => {
    const ids = ['boot', '\ud800', '.', 'key_fine'];
    const server = await startSpecServer({ record: records.full, newId: () => ids.shift()! });
    const config = tempConfigDir();
    try {
      for (const name of ['lone-surrogate', 'dot', 'fine']) server.addKey(name);
      const env = { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey };
      const manager = await session([{ menu: 'Revoke a key' }, { pickMany: ['fine'] }, { confirm: true }], env);
      expect(manager.exitCode, manager.stderr).toBe(0);
      expect(manager.stderr).toContain("Revoked 'fine' (key_fine).");
      expect(manager.stderr).not.toContain('Unexpected error');
      const picker = await session([{ pickMany: ['bootstrap'] }, { confirm: false }], env, ['keys', 'revoke']);
      for (const asked of [manager.asked[1]!, picker.asked[0]!]) {
        expect(asked).toContain('bootstrap');
        expect(asked).not.toContain('lone-surrogate');
        expect(asked).not.toContain('dot');
      }
    } finally {
      await server.close();
      config.remove();
    }
  });
});
