// tier: in-process
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Clock } from '../../src/server/clock.js';
import { ServerStartError, startServer } from '../../src/server/listen.js';
import { scanJournal } from '../../src/server/journal.js';
import { loadState, readState, StateFile, StateFileError, type StateFileOptions } from '../../src/server/persistence.js';
import { Store } from '../../src/server/store.js';
import { savedBytes, savedState } from '../helpers/saved-state.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-persist-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A store saved to `path`, with a user to make keys for. */
async function savedStore(path: string, options: StateFileOptions = {}) {
  const clock = new Clock();
  const store = new Store(clock);
  const { user } = store.createUser('u', 'free');
  const file = await StateFile.create(path, store, options);
  return { store, user, file, clock };
}

/** The journal's records, as the file holds them. */
function records(path: string): { seq: number; ops: unknown[] }[] {
  const dir = dirname(path);
  const names = readdirSync(dir).filter((name) => name.startsWith(`${basename(path)}.journal.`));
  return names.flatMap((name) => scanJournal(readFileSync(join(dir, name))).payloads.map((payload) => JSON.parse(payload.toString('utf8'))));
}

describe('StateFile', () => {
  it('appends once for a burst of concurrent saves, and resolves each only once its change is on disk', async () => {
    const path = join(tempDir(), 'state.json');
    const { store, user, file } = await savedStore(path);
    const saves = Array.from({ length: 100 }, async (_, i) => {
      const { key } = store.createKey(user, `k${i}`, null);
      await file.save();
      expect((await loadState(path))!.keys.map((k) => k.id)).toContain(key.id);
    });
    await Promise.all(saves);
    // The first save starts an append at once; the other 99 share the next one.
    expect(records(path).map((r) => r.ops.length)).toEqual([1, 99]);
    expect((await loadState(path))!.keys).toHaveLength(100);
  });

  it('never leaves a temp file behind and keeps its files private', async () => {
    const dir = tempDir();
    const path = join(dir, 'state.json');
    const { store, user, file } = await savedStore(path);
    for (let i = 0; i < 5; i++) {
      store.createKey(user, `k${i}`, null);
      await file.save();
    }
    expect(readdirSync(dir).sort()).toEqual(['state.json', 'state.json.journal.1']);
    for (const name of readdirSync(dir)) expect(statSync(join(dir, name)).mode & 0o777).toBe(0o600);
  });

  it('flush compacts what is unsaved into the snapshot and leaves no journal; with nothing to save it writes nothing', async () => {
    const dir = tempDir();
    const path = join(dir, 'state.json');
    const { store, user, file } = await savedStore(path);
    const { key } = store.createKey(user, 'k', null);
    await file.save();
    store.recordUse(key);
    await file.flush();
    expect(readdirSync(dir)).toEqual(['state.json']);
    expect((await loadState(path))!.keys[0]!.lastUsedAt).not.toBeNull();
    const before = statSync(path).mtimeMs;
    const again = await StateFile.open(path, store, (await readState(path))!);
    await again.flush();
    expect(statSync(path).mtimeMs).toBe(before);
    expect(readdirSync(dir)).toEqual(['state.json']);
  });

  it('a large store compacted in slices: what changes while the snapshot is made is saved after it, nothing lost or taken back', async () => {
    const dir = tempDir();
    const path = join(dir, 'state.json');
    const { store, user, file } = await savedStore(path);
    const keys = Array.from({ length: 10_000 }, (_, i) => store.createKey(user, `k${i}`, null).key);
    await file.save();
    // Changes and saves, one each turn of the event loop, while the flush's compaction encodes its snapshot between turns.
    let turns = 0;
    const saves: Promise<void>[] = [];
    const change = () => {
      if (turns === 50) return;
      const key = keys[(turns * 7919) % keys.length]!;
      store.setEnabled(key, !key.enabled);
      store.recordUse(key);
      store.createKey(user, `during ${turns}`, null);
      turns++;
      saves.push(file.save());
      setImmediate(change);
    };
    setImmediate(change);
    await file.flush();
    await expect.poll(() => turns).toBe(50);
    await Promise.all(saves);
    await file.flush();
    const saved = (await loadState(path))!;
    const live = store.state().keys;
    expect(saved.keys).toHaveLength(10_000 + 50);
    const byId = new Map(saved.keys.map((k) => [k.id, k]));
    for (const key of live) expect(byId.get(key.id), key.name).toMatchObject({ name: key.name, enabled: key.enabled });
  });

  it('rejects every waiter of a failed write, undoes their changes, and saves again once it can', async () => {
    const path = join(tempDir(), 'state.json');
    let failing = false;
    const { store, user, file } = await savedStore(path, {
      verify: async () => {
        if (failing) throw new StateFileError('cannot check the lock: for this test');
      },
    });
    failing = true;
    store.createKey(user, 'a', null);
    const first = file.save();
    store.createKey(user, 'b', null);
    const results = await Promise.allSettled([first, file.save(), file.save()]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(store.userKeys(user)).toEqual([]);
    failing = false;
    store.createKey(user, 'c', null);
    await expect(file.save()).resolves.toBeUndefined();
    expect((await loadState(path))!.keys.map((k) => k.name)).toEqual(['c']);
  });
});

describe('loadState', () => {
  it('is null for a missing file', async () => {
    expect(await loadState(join(tempDir(), 'absent.json'))).toBeNull();
  });

  it('round-trips a store', async () => {
    const path = join(tempDir(), 'state.json');
    const clock = new Clock();
    const store = new Store(clock);
    const { user } = store.createUser('u', 'creator');
    const { key } = store.createKey(user, 'k', clock.now() + 60_000);
    store.recordUse(key);
    await StateFile.create(path, store);
    const loaded = Store.fromSnapshot((await loadState(path))!, clock);
    expect(loaded.toSnapshot()).toEqual(store.toSnapshot());
    expect(loaded.keyRecord(loaded.userKey(user, key.id)!)).toEqual(store.keyRecord(key));
  });

  const valid = () => {
    const store = new Store(new Clock());
    const { user } = store.createUser('u', 'free');
    store.createKey(user, 'k', null);
    return store.toSnapshot() as unknown as Record<string, any>;
  };

  it.each<[string, () => string | Buffer]>([
    ['an empty file', () => ''],
    ['truncated JSON', () => JSON.stringify(valid()).slice(0, -10)],
    ['not UTF-8', () => Buffer.from([0x7b, 0xff, 0xfe, 0x7d])],
    ['a JSON array', () => '[]'],
    ['another format', () => JSON.stringify({ ...valid(), format: 'other' })],
    ['a future version', () => JSON.stringify({ ...valid(), version: 2 })],
    ['an unknown plan', () => {
      const s = valid();
      s.workspaces[0].plan = 'enterprise';
      return JSON.stringify(s);
    }],
    ['a key of an unknown workspace', () => {
      const s = valid();
      s.keys[0].workspaceId = 'ws_nope';
      return JSON.stringify(s);
    }],
    ['a key without hash', () => {
      const s = valid();
      delete s.keys[0].hash;
      return JSON.stringify(s);
    }],
    ['a bad timestamp', () => {
      const s = valid();
      s.keys[0].createdAt = 'yesterday';
      return JSON.stringify(s);
    }],
    ['no users', () => JSON.stringify({ ...valid(), users: [] })],
  ])('refuses %s', async (_, content) => {
    const path = join(tempDir(), 'state.json');
    writeFileSync(path, content());
    await expect(loadState(path)).rejects.toBeInstanceOf(StateFileError);
  });

  it('refuses a path it cannot read', async () => {
    await expect(loadState(tempDir())).rejects.toThrow(/cannot read/);
  });
});

describe('startServer with --data', () => {
  it('refuses a corrupt file with a clear message and leaves it byte-identical', async () => {
    const path = join(tempDir(), 'state.json');
    const original = Buffer.from('{"format":"svc-local-state","version":1,"users":[');
    writeFileSync(path, original);
    const start = startServer({ host: '127.0.0.1', port: 0, dataFile: path });
    await expect(start).rejects.toBeInstanceOf(ServerStartError);
    await expect(start).rejects.toThrow(/is not valid JSON.*left untouched/);
    expect(readFileSync(path).equals(original)).toBe(true);
  });

  it('writes the fresh state, bootstrap key included, before it is ready', async () => {
    const path = join(tempDir(), 'state.json');
    const server = await startServer({ host: '127.0.0.1', port: 0, dataFile: path, plan: 'starter' });
    try {
      const saved = await savedState(path);
      expect(saved.keys).toHaveLength(1);
      expect(saved.workspaces[0].plan).toBe('starter');
      expect(savedBytes(path)).not.toContain(server.ready.apiKey!.slice(3));
    } finally {
      await server.close();
    }
  });

  it('loads existing state: no plaintext key to show, and --plan is ignored', async () => {
    const path = join(tempDir(), 'state.json');
    const first = await startServer({ host: '127.0.0.1', port: 0, dataFile: path, plan: 'pro' });
    await first.close();
    const second = await startServer({ host: '127.0.0.1', port: 0, dataFile: path, plan: 'free' });
    try {
      expect(second.ready).toMatchObject({ apiKey: null, plan: 'pro', userId: first.ready.userId, workspaceId: first.ready.workspaceId });
    } finally {
      await second.close();
    }
  });
});
