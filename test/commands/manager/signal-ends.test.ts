// tier: in-process
/**
 * Which signal svc ends by (docs/contract.md §C5), as invoke() tells
 * bin/svc.js: the one that stopped the command, whichever path it took; a
 * question withdrawn with Ctrl-C ends by SIGINT, one answered with Esc or
 * No by none (exit 130 alike); an interactive session that goes back to
 * its menu ends by none. test/e2e/signals.test.ts sees the same from the
 * process.
 */
import { describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../../helpers/in-process.js';
import { scriptedPrompter, type Step } from '../../helpers/prompter.js';
import { atNth, signalsAt } from '../../helpers/signals.js';

const local = useLocalServer({ plan: 'pro' });

describe('the interactive manager', () => {
  it.each([
    ['SIGTERM', 143, 'SIGTERM'],
    ['SIGINT', 0, null],
  ] as const)('%s while its create is out: the key is shown, then svc ends (exit %i, by %s); Ctrl-C is the person at the menu, and the menu comes back', async (signal, exitCode, ending) => {
    const script: Step[] = [{ menu: 'Create a key' }, { text: `managed-${signal}` }, { text: '' }, ...(signal === 'SIGINT' ? [{ pause: true } as const] : [])];
    const result = await svc([], local.env, { tty: true, columns: 200, rows: 40, deps: { prompter: scriptedPrompter(script), ...signalsAt(atNth('POST', 1, [signal])) } });
    expect(result).toMatchObject({ exitCode, signal: ending });
    expect(result.stderr).toContain('Stopped after the new key was made (shown above); nothing else was changed.');
  });
});
