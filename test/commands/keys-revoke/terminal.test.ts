// tier: in-process
// The prompts' own drawing and keys are in test/e2e/prompts.test.ts; here, what the command does with the answers.
import { describe, expect, it } from 'vitest';
import { svc } from '../../helpers/in-process.js';
import { useCommandTest } from '../../helpers/command-test.js';
import { scriptedPrompter, type Step } from '../../helpers/prompter.js';

const local = useCommandTest({ plan: 'pro' });
const { onTerminal, create } = local;

describe('on a terminal', () => {
  it('keys revoke asks first: "no" keeps the key (exit 130), "yes" revokes it', async () => {
    const key = await create('confirm-me');
    const kept = await onTerminal(['keys', 'revoke', key.id], [{ confirm: false }]);
    expect(kept.exitCode).toBe(130);
    expect(kept.stderr).toContain('Cancelled; nothing was revoked.');
    expect(kept.stderr).not.toContain('error:');
    expect(kept.stderr).toContain(`${key.id}  confirm-me`);
    const gone = await onTerminal(['keys', 'revoke', key.id], [{ confirm: true }]);
    expect(gone.exitCode, gone.stderr).toBe(0);
    expect((await svc(['keys', 'view', key.id], local.env)).exitCode).toBe(4);
  });

  it('declining a confirmation has one outcome, whether by "no" or by Esc: "Cancelled; nothing was …", exit 130, nothing done (issue 39, 6)', async () => {
    const key = await create('declined');
    const off = await create('declined-off');
    expect((await svc(['keys', 'disable', off.id], local.env)).exitCode).toBe(0);
    const confirmations = [
      { args: ['keys', 'revoke', key.id], said: 'Cancelled; nothing was revoked.' },
      { args: ['keys', 'prune', '--disabled'], said: 'Cancelled; nothing was revoked.' },
      { args: ['keys', 'rotate', key.id], said: 'Cancelled; nothing was changed.' },
    ];
    for (const { args, said } of confirmations) {
      const outcomes = [];
      for (const answer of [{ confirm: false }, { cancel: true }] as Step[]) {
        const result = await onTerminal(args, [answer]);
        outcomes.push({ exitCode: result.exitCode, said: result.stderr.split('\n').at(-1) });
      }
      expect(outcomes, args.join(' ')).toEqual([{ exitCode: 130, said }, { exitCode: 130, said }]);
    }
    for (const { id } of [key, off]) expect((await svc(['keys', 'view', id], local.env)).exitCode).toBe(0);
  });

  it('keys revoke without an id offers a pick-list of several', async () => {
    const [a, b] = [await create('pick-a'), await create('pick-b')];
    const result = await onTerminal(['keys', 'revoke'], [{ pickMany: ['pick-a', 'pick-b'] }, { confirm: true }]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.asked[0]).toContain('← in use');
    expect(result.asked[1]).toBe('Revoke these 2 keys? This cannot be undone.');
    for (const key of [a, b]) expect((await svc(['keys', 'view', key.id], local.env)).exitCode).toBe(4);
  });

  it('keys revoke warns before revoking the key in use', async () => {
    const key = await create('in-use');
    const result = await svc(['keys', 'revoke', key.id], { ...local.env, SVC_API_KEY: key.secret }, { tty: true, deps: { prompter: scriptedPrompter([{ confirm: false }]) } });
    expect(result.stderr).toContain('This is the key svc is using');
  });
});
