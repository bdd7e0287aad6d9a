// tier: in-process
/**
 * Each question before a change to keys is written once (src/cli/dialogs/):
 * the commands and the interactive manager ask the same words for the same
 * key, after the same warning.
 */
import { describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../helpers/in-process.js';
import { scriptedPrompter, type Step } from '../helpers/prompter.js';

const local = useLocalServer({ plan: 'pro' });

async function onTerminal(args: string[], script: Step[]) {
  const prompter = scriptedPrompter(script);
  const result = await svc(args, local.env, { tty: true, columns: 120, rows: 60, deps: { prompter } });
  return { ...result, asked: prompter.asked };
}

const create = async (name: string) => JSON.parse((await svc(['keys', 'create', name, '--json'], local.env)).stdout).key as { id: string };
const inUse = async () =>
  (JSON.parse((await svc(['keys', 'list', '--json'], local.env)).stdout).keys as { id: string; name: string; hint: string }[]).find(
    (k) => k.hint === `${local.env.SVC_API_KEY!.slice(0, 7)}\u2026${local.env.SVC_API_KEY!.slice(-4)}`,
  )!;

const folded = (text: string) => text.replace(/\s+/g, ' ');

describe('the command and the manager ask alike', () => {
  it('revoke: the same question for the same key', async () => {
    const { id } = await create('asked-twice');
    const command = await onTerminal(['keys', 'revoke', id], [{ confirm: false }]);
    const manager = await onTerminal([], [{ menu: 'Revoke a key' }, { pickMany: ['asked-twice'] }, { confirm: false }]);
    expect(command.asked).toEqual([`Revoke 'asked-twice' (${id})? This cannot be undone.`]);
    expect(manager.asked).toContain(command.asked[0]);
  });

  it('revoke with no id: the same list of keys, several to mark, in the command and the manager', async () => {
    await create('listed-twice');
    const command = await onTerminal(['keys', 'revoke'], [{ pickMany: ['listed-twice'] }, { confirm: false }]);
    const manager = await onTerminal([], [{ menu: 'Revoke a key' }, { pickMany: ['listed-twice'] }, { confirm: false }]);
    expect(command.asked[0]).toMatch(/^Keys to revoke:\n/);
    expect(manager.asked).toContain(command.asked[0]);
  });

  it('revoke of the key in use: the same warning before the same question', async () => {
    const key = await inUse();
    const command = await onTerminal(['keys', 'revoke', key.id], [{ confirm: false }]);
    const manager = await onTerminal([], [{ menu: 'Revoke a key' }, { pickMany: [key.name] }, { confirm: false }]);
    expect(manager.asked).toContain(command.asked[0]);
    const warning = `This is the key svc is using (${key.hint}): revoking it locks the session out until SVC_API_KEY holds another key.`;
    expect(folded(command.stderr)).toContain(warning);
    expect(folded(manager.stderr)).toContain(warning);
  });

  it('rotate: the same question for the same key', async () => {
    const { id } = await create('rotated-twice');
    const command = await onTerminal(['keys', 'rotate', id], [{ confirm: false }]);
    const manager = await onTerminal([], [{ menu: 'Rotate a key' }, { search: 'rotated-twice' }, { confirm: false }]);
    expect(command.asked).toEqual([`Rotate 'rotated-twice' (${id})? A new key replaces it and the old one is revoked; this cannot be undone.`]);
    expect(manager.asked).toContain(command.asked[0]);
  });
});
