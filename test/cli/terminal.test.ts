// tier: in-process
/**
 * Commands as they behave on a terminal, in-process: a TTY IO and scripted
 * answers. The prompts' own drawing and keys are in test/e2e/prompts.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../helpers/in-process.js';
import { scriptedPrompter, type Step } from '../helpers/prompter.js';

const local = useLocalServer({ plan: 'pro' });

async function onTerminal(args: string[], script: Step[] = []) {
  const prompter = scriptedPrompter(script);
  const result = await svc(args, local.env, { tty: true, columns: 120, deps: { prompter } });
  return { ...result, asked: prompter.asked };
}

const create = async (name: string) => JSON.parse((await svc(['keys', 'create', name, '--json'], local.env)).stdout) as { id: string; secret: string };

describe('on a terminal', () => {
  it('keys create asks for a missing name, then shows the secret with the warning', async () => {
    const result = await onTerminal(['keys', 'create'], [{ text: 'asked-for' }]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.asked[0]).toBe('Name for the new key:');
    expect(result.stderr).toContain("Created key 'asked-for'");
    expect(result.stdout).toMatch(/^\n {2}sk_[A-Za-z0-9]{64}\n$/);
    expect(result.stderr).toContain('only time this secret is shown');
  });

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

  it('keys view lays the record out with relative times and marks the key in use', async () => {
    const key = await create('viewed');
    const result = await svc(['keys', 'view', key.id], { ...local.env, SVC_API_KEY: key.secret }, { tty: true });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^ID +\S+$/m);
    expect(result.stdout).toMatch(/^Key +sk_\S+ {2}\(the key svc is using\)$/m);
    expect(result.stdout).toMatch(/^Created +\S+ \(just now\)$/m);
    expect(result.stdout).toMatch(/^Expires +never$/m);
  });

  it('keys list draws a table, marks the key in use, and says when nothing matches', async () => {
    const table = await onTerminal(['keys', 'list']);
    expect(table.stdout).toMatch(/^ID +NAME +KEY +STATUS +WORKSPACE +CREATED +EXPIRES +LAST USED$/m);
    expect(table.stdout).toMatch(/^\* key_\S+ +bootstrap +sk_\S+ +enabled /m);
    expect(table.stderr).toContain('* the key svc is using');
    const none = await onTerminal(['keys', 'list', '--name', 'no-such-key']);
    expect(none.stderr).toContain('No key matches.');
  });

  it('keys ping says how the key is doing; --json says it as a document, --quiet not at all', async () => {
    const text = await svc(['keys', 'ping'], local.env);
    expect(text.stdout).toMatch(/^Key sk_\S+ works: 200 from http:\/\/127\.0\.0\.1:\d+ in \d+ ms; \d+ of 1000 requests left/);
    const json = JSON.parse((await svc(['keys', 'ping', '--json'], local.env)).stdout);
    expect(json).toMatchObject({ ok: true, status: 200, baseUrl: local.server.url, key: { source: 'env' } });
    expect(await svc(['keys', 'ping', '--quiet'], local.env)).toMatchObject({ exitCode: 0, stdout: '' });
  });
});
