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
import { call, svc, useLocalServer } from '../helpers/in-process.js';
import { scriptedPrompter, type Step } from '../helpers/prompter.js';
import { atNth, signalsAt } from '../helpers/signals.js';

const local = useLocalServer({ plan: 'pro' });

async function create(name: string): Promise<string> {
  return (await call(local.server.url, 'POST', '/api/service/user/api-keys', local.server.apiKey!, { name })).json.id;
}

const onTerminal = (script: Step[]) => ({ tty: true, deps: { prompter: scriptedPrompter(script) } });

describe('a question withdrawn', () => {
  it.each([
    ['Ctrl-C', 'SIGINT', { cancel: 'ctrl-c' }],
    ['Esc', null, { cancel: true }],
  ] as const)("keys create's name, with %s: exit 130, ending by %s", async (_, signal, step) => {
    const result = await svc(['keys', 'create'], local.env, onTerminal([step]));
    expect(result).toMatchObject({ exitCode: 130, signal });
  });

  it.each([
    ['No', null, { confirm: false }],
    ['Esc', null, { cancel: true }],
    ['Ctrl-C', 'SIGINT', { cancel: 'ctrl-c' }],
  ] as const)('a confirmation answered %s: nothing revoked, exit 130, ending by %s', async (_, signal, step) => {
    const id = await create(`confirm-${String(signal)}`);
    const result = await svc(['keys', 'revoke', id], local.env, onTerminal([step]));
    expect(result).toMatchObject({ exitCode: 130, signal });
    expect(result.stderr).toContain('Cancelled; nothing was revoked.');
  });

  it('a pick-list left with Ctrl-C: "Cancelled; nothing was done.", ending by SIGINT', async () => {
    const result = await svc(['keys', 'revoke'], local.env, onTerminal([{ cancel: 'ctrl-c' }]));
    expect(result).toMatchObject({ exitCode: 130, signal: 'SIGINT' });
    expect(result.stderr).toContain('Cancelled; nothing was done.');
  });

  it('in the interactive manager, Ctrl-C in an action\'s question goes back to the menu: svc then quits as asked, with no signal', async () => {
    const result = await svc([], local.env, { ...onTerminal([{ menu: 'Create a key' }, { cancel: 'ctrl-c' }, { menu: null }]), columns: 200, rows: 40 });
    expect(result).toMatchObject({ exitCode: 0, signal: null });
  });
});

describe('a change to several keys', () => {
  it('a signal while the key in hand is out, which the server then refuses (429): stopped there, that key not revoked, ending by the signal', async () => {
    const ids = [await create('refused-a'), await create('refused-b'), await create('refused-c')];
    await call(local.server.url, 'POST', '/_local/faults', local.server.adminToken, {
      rules: [{ method: 'DELETE', path: `/user/api-keys/${ids[1]}`, status: 429, retryAfter: '1' }],
    });
    const result = await svc(['keys', 'revoke', ...ids, '--yes'], local.env, { deps: signalsAt(atNth('DELETE', 2, ['SIGTERM'])) });
    expect(result).toMatchObject({ exitCode: 143, signal: 'SIGTERM' });
    expect(result.stderr).toContain(`Stopped by SIGTERM before these were tried: ${ids[1]}, ${ids[2]}.`);
    const listed = JSON.parse((await svc(['keys', 'list', '--json'], local.env)).stdout).keys as { id: string }[];
    expect(ids.filter((id) => listed.some((key) => key.id === id))).toEqual(ids.slice(1));
  });
});
