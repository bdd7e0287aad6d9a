// tier: in-process
/**
 * The data file's journal (docs/contract.md §B, "The data file"): recovery
 * stops at the first torn or damaged record and says so; compaction at
 * start-up, at shutdown and when the journal outgrows the snapshot; a crash
 * in the middle of a compaction loses and repeats nothing; a version 1 file
 * is migrated. A crash is the state of the files it leaves, copied from a
 * running server (whose files are always what a crash would leave) and then
 * cut or spoilt as a crash or a bad disk would.
 */
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { scanJournal } from '../../src/server/journal.js';
import type { ServerOptions } from '../../src/server/listen.js';
import { readState } from '../../src/server/persistence.js';
import { everyKey } from '../../src/server/snapshot.js';
import { savedState } from '../helpers/saved-state.js';
import { startTestServer, type TestServer } from './helpers.js';

const dirs: string[] = [];
const servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-journal-'));
  dirs.push(dir);
  return dir;
}

async function serve(dataFile: string, warnings: string[] = [], options: Partial<ServerOptions> = {}): Promise<TestServer> {
  const t = await startTestServer({ plan: 'pro', dataFile, logWarning: (message) => warnings.push(message), ...options });
  servers.push(t);
  return t;
}

async function stop(t: TestServer): Promise<void> {
  servers.splice(servers.indexOf(t), 1);
  await t.close();
}

async function create(t: TestServer, name: string, key?: string): Promise<{ id: string; secret: string }> {
  const res = await t.api('POST', '/user/api-keys', { body: { name }, key });
  expect(res.status, res.text).toBe(201);
  return res.json;
}

const journals = (dir: string) => readdirSync(dir).filter((name) => name.includes('.journal.')).sort();

/** A copy of the data file and its journal as they are now, in a directory of its own: what a SIGKILL now would leave. */
function crashCopy(dir: string): { dir: string; file: string } {
  const copy = tempDir();
  for (const name of ['state.json', ...journals(dir)]) copyFileSync(join(dir, name), join(copy, name));
  return { dir: copy, file: join(copy, 'state.json') };
}

/** Where each record of a journal file begins and ends. */
function recordSpans(path: string): { start: number; end: number }[] {
  const spans: { start: number; end: number }[] = [];
  let at = 0;
  for (const payload of scanJournal(readFileSync(path)).payloads) {
    spans.push({ start: at, end: at + 8 + payload.length });
    at += 8 + payload.length;
  }
  return spans;
}

/** A server on a new file that saved the bootstrap key in its snapshot and then each create, one record each. */
async function journalWith(names: string[]) {
  const dir = tempDir();
  const file = join(dir, 'state.json');
  const t = await serve(file);
  const keys = [];
  for (const name of names) keys.push(await create(t, name));
  expect(journals(dir)).toEqual(['state.json.journal.1']);
  expect(recordSpans(join(dir, 'state.json.journal.1'))).toHaveLength(names.length);
  return { dir, file, t, keys, bootstrap: t.apiKey };
}

const names = async (file: string) => (await savedState(file)).keys.map((k: { name: string }) => k.name).sort();

describe('recovery', () => {
  it('a torn last record: everything up to the one before it is loaded, the log says so, and saving goes on after it', async () => {
    const { dir, t } = await journalWith(['a', 'b', 'c']);
    const crash = crashCopy(dir);
    await stop(t);
    const journal = join(crash.dir, 'state.json.journal.1');
    const [, , last] = recordSpans(journal);
    // A crash in the middle of the last append: part of its record reached the disk.
    truncateSync(journal, last!.end - 5);

    const warnings: string[] = [];
    const again = await serve(crash.file, warnings);
    expect(warnings).toEqual([
      expect.stringMatching(new RegExp(`^recovered ${crash.file} up to change 2 of its journal and no further: .*journal\\.1: a record at byte ${last!.start} is cut short; the \\d+ bytes from there on were dropped`)),
    ]);
    const listed = await again.api('GET', '/user/api-keys', { key: t.apiKey });
    expect(listed.json.keys.map((k: { name: string }) => k.name).sort()).toEqual(['a', 'b', 'bootstrap']);
    // What comes next is saved after the last good record, not behind the torn one, and survives a restart.
    await create(again, 'd', t.apiKey);
    await stop(again);
    const warnedAgain: string[] = [];
    const third = await serve(crash.file, warnedAgain);
    expect(warnedAgain).toEqual([]);
    expect((await third.api('GET', '/user/api-keys', { key: t.apiKey })).json.keys.map((k: { name: string }) => k.name).sort()).toEqual([
      'a',
      'b',
      'bootstrap',
      'd',
    ]);
  });

  it('a record that fails its checksum in the middle of the journal: replay stops there, and what follows it is dropped too', async () => {
    const { dir, t } = await journalWith(['a', 'b', 'c']);
    const crash = crashCopy(dir);
    await stop(t);
    const journal = join(crash.dir, 'state.json.journal.1');
    const [, second] = recordSpans(journal);
    const bytes = readFileSync(journal);
    // One bit of the second record's payload flipped, as a bad sector would.
    bytes[second!.start + 20] ^= 0x01;
    writeFileSync(journal, bytes);

    const warnings: string[] = [];
    const again = await serve(crash.file, warnings);
    expect(warnings).toEqual([expect.stringContaining(`up to change 1 of its journal and no further: ${journal}: the record at byte ${second!.start} fails its checksum`)]);
    expect((await again.api('GET', '/user/api-keys', { key: t.apiKey })).json.keys.map((k: { name: string }) => k.name).sort()).toEqual(['a', 'bootstrap']);
    await stop(again);
    expect(await names(crash.file)).toEqual(['a', 'bootstrap']);
  });

  it('a journal whose data file is gone stops start-up, and is left as it was', async () => {
    const { dir, t } = await journalWith(['a']);
    const crash = crashCopy(dir);
    await stop(t);
    rmSync(crash.file);
    const before = readFileSync(join(crash.dir, 'state.json.journal.1'));
    await expect(serve(crash.file)).rejects.toThrow(`${crash.file} does not exist, but its journal`);
    expect(readFileSync(join(crash.dir, 'state.json.journal.1')).equals(before)).toBe(true);
  });
});

describe('compaction', () => {
  it('at start-up: a journal found is folded into the snapshot, and its files removed', async () => {
    const { dir, t } = await journalWith(['a', 'b']);
    const crash = crashCopy(dir);
    await stop(t);
    expect((await readState(crash.file))!.replayed).toBe(2);
    const again = await serve(crash.file);
    await expect.poll(() => journals(crash.dir)).toEqual([]);
    const read = (await readState(crash.file))!;
    expect(read.replayed).toBe(0);
    expect(read.state.seq).toBe(2);
    expect(everyKey(read.state).map((k) => k.name).sort()).toEqual(['a', 'b', 'bootstrap']);
    expect((await again.api('GET', '/user/api-keys', { key: t.apiKey })).json.keys).toHaveLength(3);
  });

  it('at shutdown: the data file alone is left, holding every change and the last uses', async () => {
    const { dir, file, t, keys } = await journalWith(['a', 'b']);
    expect((await t.api('GET', '/workspace', { key: keys[0]!.secret })).status).toBe(200);
    await stop(t);
    expect(readdirSync(dir)).toEqual(['state.json']);
    const saved = await savedState(file);
    expect(saved.keys.map((k: { name: string }) => k.name).sort()).toEqual(['a', 'b', 'bootstrap']);
    expect(saved.keys.find((k: { id: string }) => k.id === keys[0]!.id).lastUsedAt).not.toBeNull();
  });

  it('when the journal outgrows the snapshot: it is folded in while the server goes on saving', async () => {
    const dir = tempDir();
    const file = join(dir, 'state.json');
    const t = await serve(file, [], { compactAfterBytes: 1 });
    const made = [];
    for (let i = 0; i < 12; i++) made.push((await create(t, `k${i}-${'x'.repeat(60)}`)).id);
    // The first journal files were folded in: the snapshot holds some of the keys, the journal the rest.
    await expect.poll(() => journals(dir).includes('state.json.journal.1')).toBe(false);
    const read = (await readState(file))!;
    expect(read.state.seq).toBeGreaterThan(0);
    expect(everyKey(read.state).map((k) => k.id)).toEqual(expect.arrayContaining(made));
    expect(everyKey(read.state)).toHaveLength(13);
  });

  it('a crash between the snapshot and the removal of the journal it holds: nothing lost, nothing twice, nothing revoked comes back', async () => {
    const { dir, file, t, keys } = await journalWith(['a', 'b']);
    expect((await t.api('DELETE', `/user/api-keys/${keys[0]!.id}`)).status).toBe(200);
    await create(t, 'a');
    const journal = readFileSync(join(dir, 'state.json.journal.1'));
    expect(recordSpans(join(dir, 'state.json.journal.1'))).toHaveLength(4);
    await stop(t);
    // The shutdown compaction wrote the snapshot and removed the journal; the crash undoes the removal.
    expect(journals(dir)).toEqual([]);
    writeFileSync(join(dir, 'state.json.journal.1'), journal);

    const read = (await readState(file))!;
    expect(read.replayed).toBe(0);
    const again = await serve(file);
    const listed = (await again.api('GET', '/user/api-keys', { key: t.apiKey })).json.keys;
    expect(listed.map((k: { name: string }) => k.name).sort()).toEqual(['a', 'b', 'bootstrap']);
    expect(listed.map((k: { id: string }) => k.id)).not.toContain(keys[0]!.id);
    await expect.poll(() => journals(dir)).toEqual([]);
  });
});

describe('the version 1 data file', () => {
  it('is read, and migrated to the compact snapshot by the first compaction', async () => {
    const { dir, file, t } = await journalWith(['a']);
    await stop(t);
    const legacy = join(tempDir(), 'state.json');
    const saved = await savedState(file);
    writeFileSync(legacy, JSON.stringify(saved), { mode: 0o600 });
    expect(existsSync(join(dir, 'state.json'))).toBe(true);

    const again = await serve(legacy);
    await expect.poll(() => readFileSync(legacy).subarray(0, 8).toString('latin1')).toBe('SVCSNAP\n');
    expect(await savedState(legacy)).toEqual(saved);
    expect((await again.api('GET', '/user/api-keys', { key: t.apiKey })).status).toBe(200);
  });
});
