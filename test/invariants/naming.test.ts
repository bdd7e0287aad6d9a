// tier: in-process
/**
 * One way to name a key in every command (issue 25, 3): view, enable,
 * disable, rotate and revoke take ids (trimmed), open the same aligned
 * picker on a terminal when none is given, say the same usage line
 * elsewhere, and take the name of exactly one key for its id.
 */
import { describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../helpers/in-process.js';
import { useCommandTest } from '../helpers/command-test.js';

const local = useCommandTest({ plan: 'pro' });
const { onTerminal, create } = local;

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
    expect(off.asked[0]).toMatch(/^Keys to disable:/);
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
    expect(result.exitCode).toBe(130);
    expect(await statusOf(key.id)).toBe('enabled');
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

  it('the name of exactly one key, trimmed, names that key in view, disable, enable, revoke and rotate', async () => {
    const key = await create('laptop');
    const view = await svc(['keys', 'view', ' laptop\n'], local.env);
    expect(view.exitCode, view.stderr).toBe(0);
    expect(view.stdout).toContain(`id\t${key.id}`);
    const off = await svc(['keys', 'disable', 'laptop'], local.env);
    expect(off.stderr).toBe(`✓ Disabled ${key.id} (laptop).`);
    expect(await statusOf(key.id)).toBe('disabled');
    const on = await svc(['keys', 'enable', 'laptop', '--json'], local.env);
    expect(on.exitCode, on.stderr).toBe(0);
    expect(JSON.parse(on.stdout).changed).toEqual([expect.objectContaining({ id: key.id, enabled: true })]);
    const rotated = await svc(['keys', 'rotate', 'laptop', '--yes'], local.env);
    expect(rotated.exitCode, rotated.stderr).toBe(0);
    expect(rotated.stderr).toContain(`Revoked the old key ${key.id};`);
    // The rotation made a new key of that name, the only one now: revoke finds it by name too.
    const replacement = (await svc(['keys', 'view', 'laptop', '--json'], local.env)).stdout;
    const { id: newId } = JSON.parse(replacement);
    const revoked = await svc(['keys', 'revoke', 'laptop', '--yes'], local.env);
    expect(revoked.exitCode, revoked.stderr).toBe(0);
    expect(revoked.stderr).toBe(`✓ Revoked 'laptop' (${newId}).`);
  });

  it('a key named with spaces around its name is found by the name trimmed', async () => {
    const key = await create('  spaced  ');
    const view = await svc(['keys', 'view', 'spaced'], local.env);
    expect(view.exitCode, view.stderr).toBe(0);
    expect(view.stdout).toContain(`id\t${key.id}`);
  });

  it("an id always wins over a name: a key named as another key's id does not shadow it", async () => {
    const real = await create('real');
    const impostor = await create(real.id);
    const off = await svc(['keys', 'disable', real.id], local.env);
    expect(off.stderr).toBe(`✓ Disabled ${real.id} (real).`);
    expect(await statusOf(real.id)).toBe('disabled');
    expect(await statusOf(impostor.id)).toBe('enabled');
  });

  it('a confirmation names the key a name resolved to, by its name and id', async () => {
    const key = await create('confirm-me');
    const revoke = await onTerminal(['keys', 'revoke', 'confirm-me'], [{ confirm: false }]);
    expect(revoke.exitCode).toBe(130);
    expect(revoke.stderr).toContain(key.id);
    expect(revoke.asked).toEqual([`Revoke 'confirm-me' (${key.id})? This cannot be undone.`]);
    const rotate = await onTerminal(['keys', 'rotate', 'confirm-me'], [{ confirm: false }]);
    expect(rotate.asked[0]).toContain(`Rotate 'confirm-me' (${key.id})?`);
    expect(await statusOf(key.id)).toBe('enabled');
  });

  it('a name several keys share lists them (id, name, state, created) and does nothing, exit 2', async () => {
    const [a, b] = [await create('twin'), await create('twin')];
    await svc(['keys', 'disable', b.id], local.env);
    const row = (id: string, state: string) => new RegExp(`^  ${id}  twin  ${state} +created \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC$`, 'm');
    for (const args of [['view', 'twin'], ['disable', 'twin'], ['enable', 'twin'], ['rotate', 'twin', '--yes'], ['revoke', 'twin', '--yes'], ['revoke', 'twin', '--yes', '--if-exists']]) {
      const result = await svc(['keys', ...args], local.env);
      expect(result.exitCode, args.join(' ')).toBe(2);
      expect(result.stderr.split('\n')[0]).toBe("error: 'twin' is the name of 2 keys, so it names none of them: give the id of the one you mean.");
      expect(result.stderr).toMatch(row(a.id, 'enabled '));
      expect(result.stderr).toMatch(row(b.id, 'disabled'));
    }
    expect(await statusOf(a.id)).toBe('enabled');
    expect(await statusOf(b.id)).toBe('disabled');
    // On a terminal, revoke stops before it asks.
    const asked = await onTerminal(['keys', 'revoke', 'twin'], []);
    expect(asked.exitCode).toBe(2);
    expect(asked.asked).toEqual([]);
  });

  it('is refused in one message whichever command and form it came by (issue 46, 3): revoke alone adds --all', async () => {
    const [a, b] = [await create('triplet'), await create('triplet')];
    const refusal = async (args: string[], terminal: boolean) => {
      const result = terminal ? await onTerminal(['keys', ...args], []) : await svc(['keys', ...args], local.env);
      expect(result.exitCode, args.join(' ')).toBe(2);
      return result.stderr;
    };
    const forms: [string[], boolean][] = [
      [['view', 'triplet'], false],
      [['enable', 'triplet'], false],
      [['disable', 'triplet'], false],
      [['rotate', 'triplet', '--yes'], false],
      [['rotate', 'triplet'], true],
      [['disable', 'triplet'], true],
    ];
    const revokes: [string[], boolean][] = [
      [['revoke', 'triplet', '--yes'], false],
      [['revoke', 'triplet'], true],
      [['revoke', '--name', 'triplet', '--yes'], false],
      [['revoke', '--name', 'triplet'], true],
    ];
    const messages = new Set(await Promise.all(forms.map(([args, terminal]) => refusal(args, terminal))));
    expect(messages.size).toBe(1);
    const [message] = messages;
    expect(message).toContain(a.id);
    expect(message).toContain(b.id);
    const revoked = new Set(await Promise.all(revokes.map(([args, terminal]) => refusal(args, terminal))));
    expect([...revoked]).toEqual([`${message}\nOr revoke every one: svc keys revoke --name triplet --all`]);
    expect(await statusOf(a.id)).toBe('enabled');
    expect(await statusOf(b.id)).toBe('enabled');
  });

  it('neither an id nor a name is the 404 it always was (exit 4), with the keys it most likely meant', async () => {
    const key = await create('workstation');
    const typo = await svc(['keys', 'view', 'workstaton'], local.env);
    expect(typo.exitCode).toBe(4);
    expect(typo.stderr).toBe(
      `error: No key with id or name workstaton: it never existed, belongs to another user, or was already revoked. Did you mean ${key.id} ('workstation') (\`svc keys view ${key.id}\`)?`,
    );
    const nothing = await svc(['keys', 'disable', 'zzzzzzzzzzzzzzzzzzzz'], local.env);
    expect(nothing.exitCode).toBe(4);
    expect(nothing.stderr).toBe('error: No key with id or name zzzzzzzzzzzzzzzzzzzz: it never existed, belongs to another user, or was already revoked.');
  });

  it('revoke --if-exists takes a gone id for done, and revokes a key by its name', async () => {
    const key = await create('desk');
    const result = await svc(['keys', 'revoke', 'key_long_gone', 'desk', '--yes', '--if-exists'], local.env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toBe(['key_long_gone was already gone.', `✓ Revoked 'desk' (${key.id}).`].join('\n'));
    expect((await svc(['keys', 'view', key.id], local.env)).exitCode).toBe(4);
  });
});

describe('a name on a later page of the list', () => {
  const paged = useLocalServer({ plan: 'pro', pageSize: 2 });

  it('names its key: every page is read', async () => {
    const made: string[] = [];
    for (const name of ['p1', 'p2', 'p3', 'p4', 'p5']) made.push(JSON.parse((await svc(['keys', 'create', name, '--json'], paged.env)).stdout).key.id);
    for (const [i, name] of ['p1', 'p5'].entries()) {
      const result = await svc(['keys', 'view', name, '--json'], paged.env);
      expect(result.exitCode, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout).id).toBe(made[i === 0 ? 0 : 4]);
    }
  });
});
