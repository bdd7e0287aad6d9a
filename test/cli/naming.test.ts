// tier: in-process
/**
 * One way to name a key in every command (issue 25, 3): view, enable,
 * disable, rotate and revoke take ids (trimmed), open the same aligned
 * picker on a terminal when none is given, say the same usage line
 * elsewhere, and answer a key's name given for its id with that key's id.
 */
import { describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../helpers/in-process.js';
import { scriptedPrompter, type Step } from '../helpers/prompter.js';

const local = useLocalServer({ plan: 'pro' });

async function onTerminal(args: string[], script: Step[]) {
  const prompter = scriptedPrompter(script);
  const result = await svc(args, local.env, { tty: true, columns: 120, deps: { prompter } });
  return { ...result, asked: prompter.asked };
}

const create = async (name: string) => JSON.parse((await svc(['keys', 'create', name, '--json'], local.env)).stdout) as { id: string; secret: string };
const statusOf = async (id: string) => JSON.parse((await svc(['keys', 'view', id, '--json'], local.env)).stdout).status as string;

describe('a command given no key id', () => {
  it.each([
    ['view', 'svc keys view <id>'],
    ['enable', 'svc keys enable <id>…'],
    ['disable', 'svc keys disable <id>…'],
    ['rotate', 'svc keys rotate <id>'],
    ['revoke', 'svc keys revoke <id>…'],
  ])('keys %s without a terminal is one usage line with the fix, exit 2', async (command, form) => {
    const result = await svc(['keys', command], local.env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe(`error: Missing the key id: ${form} (see \`svc keys list\`)`);
  });

  it('keys view on a terminal picks one key from the aligned list and shows it', async () => {
    const key = await create('pick-view');
    const result = await onTerminal(['keys', 'view'], [{ search: 'pick-view' }]);
    expect(result.exitCode, result.stderr).toBe(0);
    const [question, ...choices] = result.asked[0]!.split('\n');
    expect(question).toBe('Key to view:');
    // Name, hint, state and last use in columns: the hints all start at one place.
    const hintAt = choices.map((choice) => choice.search(/sk_/));
    expect(new Set(hintAt).size).toBe(1);
    expect(result.stdout).toContain(key.id);
  });

  it('keys disable and enable on a terminal offer only the keys not already in that state, several at once', async () => {
    const [a, b] = [await create('pick-off-a'), await create('pick-off-b')];
    const off = await onTerminal(['keys', 'disable'], [{ pickMany: ['pick-off-a', 'pick-off-b'] }]);
    expect(off.exitCode, off.stderr).toBe(0);
    expect(off.asked[0]).toMatch(/^Keys to disable \(space to select, enter to confirm\):/);
    expect(off.stderr).toContain(`Disabled ${a.id} (pick-off-a).`);
    expect(off.stderr).toContain(`Disabled ${b.id} (pick-off-b).`);
    const on = await onTerminal(['keys', 'enable'], [{ pickMany: ['pick-off-a'] }]);
    expect(on.exitCode, on.stderr).toBe(0);
    // Only disabled keys are offered to enable.
    expect(on.asked[0]!.split('\n').slice(1).map((line) => line.trim().split(/\s+/)[0]).sort()).toEqual(['pick-off-a', 'pick-off-b']);
    expect(await statusOf(a.id)).toBe('enabled');
    expect(await statusOf(b.id)).toBe('disabled');
  });

  it('keys rotate on a terminal picks the key, then asks before rotating', async () => {
    const key = await create('pick-rotate');
    const result = await onTerminal(['keys', 'rotate'], [{ search: 'pick-rotate' }, { confirm: false }]);
    expect(result.asked[0]!.split('\n')[0]).toBe('Key to rotate:');
    expect(result.asked[1]).toContain(`Rotate 'pick-rotate' (${key.id})?`);
    expect(result.exitCode).toBe(1);
    expect(await statusOf(key.id)).toBe('enabled');
  });
});

describe('several ids', () => {
  it('keys disable and enable take several, like revoke; one not found is reported after the others (exit 4)', async () => {
    const [a, b] = [await create('many-a'), await create('many-b')];
    const off = await svc(['keys', 'disable', a.id, 'key_nope', b.id], local.env);
    expect(off.exitCode).toBe(4);
    expect(off.stderr).toBe(
      [
        `✓ Disabled ${a.id} (many-a).`,
        `✓ Disabled ${b.id} (many-b).`,
        'error: No key with id key_nope: it never existed, belongs to another user, or was already revoked.',
      ].join('\n'),
    );
    const on = await svc(['keys', 'enable', a.id, b.id, '--json'], local.env);
    expect(on.exitCode, on.stderr).toBe(0);
    expect(JSON.parse(on.stdout).map((doc: { id: string; enabled: boolean }) => [doc.id, doc.enabled])).toEqual([
      [a.id, true],
      [b.id, true],
    ]);
  });
});

describe('what is given for an id', () => {
  it('is trimmed of the white space a paste brings along', async () => {
    const key = await create('pasted');
    const view = await svc(['keys', 'view', ` ${key.id}\n`], local.env);
    expect(view.exitCode, view.stderr).toBe(0);
    expect(view.stdout).toContain(`id\t${key.id}`);
    const off = await svc(['keys', 'disable', `${key.id} `], local.env);
    expect(off.stderr).toBe(`✓ Disabled ${key.id} (pasted).`);
  });

  it("a key's name is answered with its id and the command to run, and is not acted on (exit 4)", async () => {
    const key = await create('laptop');
    for (const command of ['view', 'disable', 'enable', 'rotate']) {
      const result = await svc(['keys', command, 'laptop'], local.env);
      expect(result.exitCode).toBe(4);
      expect(result.stderr).toBe(`error: No key with id laptop; a key named 'laptop' has id ${key.id} (\`svc keys ${command} ${key.id}\`).`);
    }
    const revoke = await svc(['keys', 'revoke', 'laptop', '--yes'], local.env);
    expect(revoke.exitCode).toBe(4);
    expect(revoke.stderr).toContain(`(\`svc keys revoke ${key.id}\`)`);
    expect(await statusOf(key.id)).toBe('enabled');
  });

  it('a name several keys share lists them all', async () => {
    const [a, b] = [await create('twin'), await create('twin')];
    const result = await svc(['keys', 'view', 'twin'], local.env);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toMatch(/^error: No key with id twin; 2 keys are named 'twin': (\S+), (\S+)\.$/);
    expect(result.stderr).toContain(a.id);
    expect(result.stderr).toContain(b.id);
  });

  it('revoke --if-exists takes a gone id for done, but says when it was the name of a key', async () => {
    const key = await create('workstation');
    const result = await svc(['keys', 'revoke', 'workstation', '--yes', '--if-exists'], local.env);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe(
      [
        'workstation was already gone.',
        `! workstation is no key's id, but the key ${key.id} is named so: \`svc keys revoke ${key.id}\` revokes it.`,
      ].join('\n'),
    );
    expect(await statusOf(key.id)).toBe('enabled');
  });
});
