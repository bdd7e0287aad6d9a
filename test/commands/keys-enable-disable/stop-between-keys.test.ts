// tier: in-process
/**
 * A change to several keys stopped by a signal (a cancelled CI job, Ctrl-C):
 * the first signal stops it between two keys, with every change that landed
 * told as it landed and the keys not tried named, exit 128 + n; a second
 * stops at once, naming the key whose change may or may not have landed.
 * Nothing that landed goes untold, and nothing is told that did not land.
 */
import { describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../../helpers/in-process.js';
import { atNth, signalsAt } from '../../helpers/signals.js';
import { keyBatch, told } from '../../helpers/key-batch.js';

const local = useLocalServer({ plan: 'pro' });

const { makeKeys, onServer } = keyBatch(local);

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
