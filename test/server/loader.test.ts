// tier: in-process
/**
 * The state file's loader refuses every record the API could not have made
 * (docs/contract.md §B): names it would refuse, ids and hints of another
 * shape, fields it never writes, timestamps it never writes, a key anchored
 * outside its user's workspaces. Each refusal names the file and the record.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Clock } from '../../src/server/clock.js';
import { ServerStartError, startServer } from '../../src/server/listen.js';
import { readState, StateFileError } from '../../src/server/persistence.js';
import { Store } from '../../src/server/store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

type State = {
  users: { id: string; name: unknown; workspaceIds: string[]; [field: string]: unknown }[];
  workspaces: { id: string; name: unknown; [field: string]: unknown }[];
  keys: { id: string; name: unknown; [field: string]: unknown }[];
  [field: string]: unknown;
};

/** A state as the server wrote it before the compact snapshot (version 1): two users with a workspace each, the first with two keys. */
function writtenState(): State {
  const store = new Store(new Clock(() => Date.parse('2026-01-01T00:00:00.000Z')));
  const { user } = store.createUser('Local user', 'free');
  store.createKey(user, 'first', null);
  store.createKey(user, 'second', Date.parse('2027-01-01T00:00:00.000Z'));
  store.createUser('Other', 'pro');
  return JSON.parse(JSON.stringify(store.toSnapshot()));
}

function fileHolding(state: State): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-loader-'));
  dirs.push(dir);
  const path = join(dir, 'state.json');
  writeFileSync(path, JSON.stringify(state));
  return path;
}

const ESC = '\u001b';

describe('the state file loader', () => {
  it('loads what the server writes, names of 100 code points (200 UTF-16 units) included', async () => {
    const state = writtenState();
    state.keys[0]!.name = '\u{1F600}'.repeat(100);
    state.users[1]!.name = 'Ada Lovelace — ünïcödé';
    expect((await readState(fileHolding(state)))!.state.keys[0]!.name).toBe(state.keys[0]!.name);
  });

  /** Each case spoils a good state and says what the refusal must say about it. */
  it.each<[string, (s: State) => string]>([
    ['a key with an empty name', (s) => ((s.keys[0]!.name = ''), `keys[0] (${s.keys[0]!.id}): "name" must be 1 to 100 characters after trimming`)],
    ['a key name with an escape character', (s) => ((s.keys[1]!.name = `red${ESC}[31m`), `keys[1] (${s.keys[1]!.id}): "name" must not contain control characters`)],
    ['a key name with a lone surrogate', (s) => ((s.keys[0]!.name = 'half \ud800'), `keys[0] (${s.keys[0]!.id}): "name" must not contain control characters`)],
    ['a key name of 101 code points', (s) => ((s.keys[0]!.name = 'x'.repeat(101)), `keys[0] (${s.keys[0]!.id}): "name" must be 1 to 100 characters after trimming`)],
    ['a key name the API would have trimmed', (s) => ((s.keys[0]!.name = ' padded'), `keys[0] (${s.keys[0]!.id}): "name" begins or ends with white space`)],
    ['a key name that is not a string', (s) => ((s.keys[0]!.name = 7), `keys[0] (${s.keys[0]!.id}): "name" is not a string`)],
    ['a user name with a NUL', (s) => ((s.users[1]!.name = 'a\u0000b'), `users[1] (${s.users[1]!.id}): "name" must not contain control characters`)],
    ['a workspace with an empty name', (s) => ((s.workspaces[0]!.name = ''), `workspaces[0] (${s.workspaces[0]!.id}): "name" must be 1 to 100 characters`)],
    ['a key id of another shape', (s) => ((s.keys[1]!.id = 'key_short'), 'keys[1]: "id" is not a key id as the server makes them (key_ and 20 of 0-9, a-z)')],
    ['a user id with capitals', (s) => ((s.users[0]!.id = `usr_${'A'.repeat(20)}`), 'users[0]: "id" is not a user id as the server makes them')],
    ['a workspace id with a key prefix', (s) => ((s.workspaces[1]!.id = s.keys[0]!.id), 'workspaces[1]: "id" is not a workspace id')],
    ['a hint of another shape', (s) => ((s.keys[0]!.hint = 'sk_abcd...wxyz'), `keys[0] (${s.keys[0]!.id}): "hint" is not of the form sk_abcd\u2026wxyz`)],
    ['a field the format does not have', (s) => ((s.keys[1]!.secret = `sk_${'a'.repeat(64)}`), `keys[1] (${s.keys[1]!.id}) has a field the format does not have: "secret"`)],
    ['a field the document does not have', (s) => ((s.comment = 'hand-edited'), 'the document has a field the format does not have: "comment"')],
    ['a date that does not exist', (s) => ((s.keys[0]!.createdAt = '2026-02-30T00:00:00.000Z'), `keys[0] (${s.keys[0]!.id}): "createdAt" is not an ISO 8601 UTC timestamp`)],
    ['a year past 9999', (s) => ((s.keys[1]!.expiresAt = '+010000-01-01T00:00:00.000Z'), `keys[1] (${s.keys[1]!.id}): "expiresAt" is not an ISO 8601 UTC timestamp`)],
    ['a key that expires before it was made', (s) => ((s.keys[1]!.expiresAt = '2025-12-31T23:59:59.999Z'), `keys[1] (${s.keys[1]!.id}): "expiresAt" is not after "createdAt", as the API requires`)],
    ['a key anchored to a workspace of another user', (s) => ((s.keys[0]!.workspaceId = s.workspaces[1]!.id), `keys[0] (${s.keys[0]!.id}): "workspaceId" is not one of its user's workspaces`)],
    ['a user in one workspace twice', (s) => (s.users[0]!.workspaceIds.push(s.users[0]!.workspaceIds[0]!), `users[0] (${s.users[0]!.id}): "workspaceIds" names a workspace twice`)],
  ])('refuses %s, naming the file and the record', async (_, spoil) => {
    const state = writtenState();
    const expected = spoil(state);
    const path = fileHolding(state);
    const read = readState(path);
    await expect(read).rejects.toBeInstanceOf(StateFileError);
    await expect(read).rejects.toThrow(`${path} is not a valid svc state file: ${expected}`);
  });

  it('stops start-up, naming file and record, and leaves the file as it was', async () => {
    const state = writtenState();
    state.keys[1]!.name = `${ESC}]0;owned${ESC}\\`;
    const path = fileHolding(state);
    const before = readFileSync(path);
    const start = startServer({ host: '127.0.0.1', port: 0, dataFile: path });
    await expect(start).rejects.toBeInstanceOf(ServerStartError);
    await expect(start).rejects.toThrow(`${path} is not a valid svc state file: keys[1] (${state.keys[1]!.id}): "name" must not contain control characters`);
    expect(readFileSync(path).equals(before)).toBe(true);
  });
});
