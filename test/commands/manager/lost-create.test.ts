// tier: in-process
/**
 * The look for the key a lost create made (docs/contract.md §C4), case by
 * case: a gateway's 504 whose change lands seconds later, list reads lost
 * on the way, two jobs making keys of one name at once, the interactive
 * manager's create, a signal while svc looks, and the --json fields. svc's
 * fake sleep moves the reference server's clock, so a late change lands as
 * svc waits, in no time.
 */
import { describe, expect, it } from 'vitest';
import { call, svc, useLocalServer } from '../../helpers/in-process.js';
import { scriptedPrompter } from '../../helpers/prompter.js';

const local = useLocalServer({ plan: 'pro' });

const fault = (...rules: Record<string, unknown>[]) => call(local.server.url, 'POST', '/_local/faults', local.server.adminToken, { rules });
const named = async (name: string) =>
  (JSON.parse((await svc(['keys', 'list', '--json', '--name', name], local.env)).stdout).keys as { id: string; name: string; expiresAt: string | null }[]).filter(
    (key) => key.name === name,
  );
/** svc, its sleeps moving the server's clock. */
const run = (args: string[], env: Record<string, string> = local.env, options: Parameters<typeof svc>[2] = {}) => svc(args, env, { server: local.server, ...options });

describe('the interactive manager\'s create', () => {
  it('its answer lost: the key its expiry tells for its own is revoked, and the session goes on', async () => {
    await fault({ method: 'POST', path: '/user/api-keys', status: 503, after: true });
    const prompter = scriptedPrompter([{ menu: 'Create a key' }, { text: 'from-the-manager' }, { text: '2w' }]);
    const result = await run([], local.env, { tty: true, columns: 120, rows: 60, deps: { prompter } });
    expect(result.stderr).toMatch(/key_[a-z0-9]+ {2}created \S+ {2}revoked now/);
    expect(await named('from-the-manager')).toEqual([]);
    expect(prompter.asked.filter((q) => q.startsWith('Revoke'))).toEqual([]);
  });
});
