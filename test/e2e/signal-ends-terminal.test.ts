// tier: process
/**
 * A signal ends svc as that signal (docs/contract.md §C5), seen where it
 * matters, on a real terminal: a bash or zsh loop around svc stops at the
 * first Ctrl-C, as it does for any program Ctrl-C kills (a loop goes on
 * after a program that exits 130, taking the signal as handled). At a
 * prompt Ctrl-C is a key in raw mode, not a signal, but the person meant
 * it as one: svc ends by SIGINT; Esc and a No are answers, a plain exit
 * 130. A SIGTERM at a prompt ends svc too, with the terminal given back
 * in line mode.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SVC_BIN, svc } from '../helpers/cli.js';
import { useFaultyServer } from '../helpers/reference-faults.js';
import { Terminal } from '../helpers/terminal.js';

const server = useFaultyServer();
let term: Terminal | undefined;

afterEach(async () => {
  await term?.close();
  term = undefined;
});

const create = (name: string) => server.makeKey(name);
const left = (ids: readonly string[]) => server.left(ids);

const quoted = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

describe.each([
  ['bash', ['bash', '--norc', '--noprofile', '-i', '-c']],
  ['zsh', ['zsh', '-f', '-i', '-c']],
])('a %s loop around svc keys revoke --yes', (_, shell) => {
  it('stops at the first Ctrl-C: the key in hand is revoked, the keys after it are still there', async () => {
    const ids = [await create('loop-a'), await create('loop-b'), await create('loop-c')];
    // Each revoke is held, so that the Ctrl-C lands while the first is out.
    for (const id of ids) await server.fault({ method: 'DELETE', path: `/user/api-keys/${id}`, delayMs: 3000 });
    const loop = `for id in ${ids.join(' ')}; do ${quoted(process.execPath)} ${quoted(SVC_BIN)} keys revoke "$id" --yes; done`;
    term = await Terminal.start([...shell, loop], { ...server.env, NO_COLOR: '1' });
    // A rule leaves the list as its request takes it: the first revoke is out.
    await expect.poll(async () => (await server.rules()).length).toBe(2);
    await term.send('C-c');
    await term.exitCode();
    const screen = await term.history();
    expect(screen).toContain(`Stopping once ${ids[0]} is done (SIGINT again to stop at once).`);
    expect(screen).toContain(`Revoked ${ids[0]}.`);
    expect(await left(ids)).toEqual(ids.slice(1));
  });
});

describe.each([
  ['bash', ['bash', '--norc', '--noprofile', '-i', '-c']],
  ['zsh', ['zsh', '-f', '-i', '-c']],
])('a %s loop around svc run --ephemeral', (_, shell) => {
  it('stops at the first Ctrl-C: the job in hand ends and its key is revoked, no job after it starts', async () => {
    const name = `loop-run-${_}`;
    const job = `echo "job $SVC_EPHEMERAL_KEY_ID"; sleep 30`;
    const loop = `for i in 1 2 3; do ${quoted(process.execPath)} ${quoted(SVC_BIN)} run --ephemeral --name ${name} -- sh -c ${quoted(job)}; done`;
    term = await Terminal.start([...shell, loop], { ...server.env, NO_COLOR: '1' });
    await term.waitFor('job key_');
    await term.send('C-c');
    await term.exitCode();
    const screen = await term.history();
    expect(screen.match(/job key_/g)).toHaveLength(1);
    expect(screen).toMatch(/Revoked key key_\w+\./);
    const listed = JSON.parse((await svc(['keys', 'list', '--json'], server.env)).stdout).keys as { name: string }[];
    expect(listed.filter((key) => key.name === name)).toEqual([]);
  });
});

describe('a question on the terminal', () => {
  it('Ctrl-C at it ends svc by SIGINT; the terminal is back in line mode', async () => {
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'create'], server.env, undefined, { ending: true });
    await term.waitFor('Name for the new key:');
    await term.send('C-c');
    expect(await term.ending()).toEqual({ exitCode: null, signal: 'SIGINT', lineMode: true });
  });

  it('Esc withdraws it: exit 130, no signal, nothing made', async () => {
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'create'], server.env, undefined, { ending: true });
    await term.waitFor('Name for the new key:');
    await term.send('esc-made', 'Escape');
    expect(await term.ending()).toEqual({ exitCode: 130, signal: null, lineMode: true });
    expect((await svc(['keys', 'list', '--name', 'esc-made', '--json'], server.env)).stdout).toContain('"keys": []');
  });

  it.each([
    ['No', ['n', 'Enter'], { exitCode: 130, signal: null }],
    ['Esc', ['Escape'], { exitCode: 130, signal: null }],
    ['Ctrl-C', ['C-c'], { exitCode: null, signal: 'SIGINT' }],
  ])('a confirmation answered %s: nothing revoked, and svc ends so', async (_, keys, ended) => {
    const id = await create('confirmed');
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'revoke', id], server.env, undefined, { ending: true });
    await term.waitFor(`Revoke 'confirmed' (${id})?`);
    await term.send(...keys);
    expect(await term.ending()).toEqual({ ...ended, lineMode: true });
    await term.waitFor('Cancelled; nothing was revoked.');
    expect(await left([id])).toEqual([id]);
  });

  it.each(['SIGTERM', 'SIGHUP'] as const)('%s while it waits ends svc by it at once, with the terminal given back in line mode', async (signal) => {
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'create'], server.env, undefined, { ending: true });
    await term.waitFor('Name for the new key:');
    await term.send('half-typed');
    process.kill(await term.pid(), signal);
    expect(await term.ending()).toEqual({ exitCode: null, signal, lineMode: true });
    expect((await svc(['keys', 'list', '--name', 'half-typed', '--json'], server.env)).stdout).toContain('"keys": []');
  });
});
