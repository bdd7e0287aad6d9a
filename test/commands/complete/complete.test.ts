// tier: in-process
/**
 * The interactive manager's actions in-process: a TTY IO and a scripted
 * prompter stand in for the person. What only a real terminal shows (keys,
 * screen, resize) is in test/e2e/interactive.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { svc, tempConfigDir, useLocalServer } from '../../helpers/in-process.js';

const local = useLocalServer({ plan: 'pro' });

describe('svc __complete', () => {
  it('offers key ids with name and status, and profiles with their keys', async () => {
    const ids = await svc(['__complete', 'key-ids'], local.env);
    expect(ids.exitCode).toBe(0);
    expect(ids.stdout).toMatch(/^key_\S+\tbootstrap, enabled$/m);
    const config = tempConfigDir();
    try {
      const env = { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: local.server.url };
      await svc(['login', '--with-key', '--profile', 'ci'], env, { input: local.server.apiKey! });
      const profiles = await svc(['__complete', 'profiles'], env);
      expect(profiles.stdout.split('\n')).toEqual([`ci\tsk_${local.server.apiKey!.slice(3, 7)}…${local.server.apiKey!.slice(-4)}`, 'default\tno key saved']);
    } finally {
      config.remove();
    }
  });

  it('prints nothing at all when it cannot tell', async () => {
    const down = await svc(['__complete', 'key-ids'], { SVC_BASE_URL: 'http://127.0.0.1:9', SVC_API_KEY: local.server.apiKey! });
    expect(down).toMatchObject({ exitCode: 0, stdout: '' });
    expect((await svc(['__complete', 'colours'], local.env)).stdout).toBe('');
  });
});
