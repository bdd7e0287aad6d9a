// tier: in-process
/**
 * A change to several keys stopped by a signal (a cancelled CI job, Ctrl-C):
 * the first signal stops it between two keys, with every change that landed
 * told as it landed and the keys not tried named, exit 128 + n; a second
 * stops at once, naming the key whose change may or may not have landed.
 * Nothing that landed goes untold, and nothing is told that did not land.
 */
import { describe, expect, it } from 'vitest';
import { call, svc, useLocalServer } from '../../helpers/in-process.js';
import { atNth, signalsAt } from '../../helpers/signals.js';

const local = useLocalServer({ plan: 'pro' });

async function makeKeys(name: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await call(local.server.url, 'POST', '/api/service/user/api-keys', local.server.apiKey!, { name })).json.id);
  return ids;
}

/** The keys named `name` on the server now, and whether each is enabled. */
async function onServer(name: string): Promise<Map<string, boolean>> {
  const { keys } = JSON.parse((await svc(['keys', 'list', '--json'], local.env)).stdout) as { keys: { id: string; name: string; enabled: boolean }[] };
  return new Map(keys.filter((k) => k.name === name).map((k) => [k.id, k.enabled]));
}

const told = (stderr: string, verb: string) => [...stderr.matchAll(new RegExp(`✓ ${verb} (?:'[^']*' \\()?(key_\\w+)`, 'g'))].map((m) => m[1]!);

describe('a signal partway through switching several keys', () => {
  it('disable stops between two keys: the keys disabled were told, the rest stay enabled', async () => {
    const made = await makeKeys('batch-switch', 4);
    const result = await svc(['keys', 'disable', ...made], local.env, { deps: signalsAt(atNth('PATCH', 2, ['SIGTERM'])) });
    expect(result.exitCode).toBe(143);
    const disabled = told(result.stderr, 'Disabled');
    expect(disabled).toEqual(made.slice(0, 2));
    const now = await onServer('batch-switch');
    for (const id of made) expect(now.get(id)).toBe(!disabled.includes(id));
    expect(result.stderr).toContain(`Stopped by SIGTERM before these were tried: ${made.slice(2).join(', ')}.`);
  });
});
