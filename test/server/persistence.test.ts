// tier: in-process
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Clock } from '../../src/server/clock.js';
import { ServerStartError, startServer } from '../../src/server/listen.js';
import { loadState, StateFile, StateFileError, type Snapshottable } from '../../src/server/persistence.js';
import { Store } from '../../src/server/store.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-persist-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A state whose file holds just its version, to see which write carried which change. */
function countingState() {
  const state = {
    version: 0,
    encoded: 0,
    stateFileParts() {
      state.encoded++;
      return [Buffer.from(JSON.stringify({ version: state.version }))];
    },
    restore() {
      throw new Error('a counting state has nothing to go back to');
    },
  };
  return state satisfies Snapshottable;
}

describe('StateFile', () => {
  it('writes once for a burst of concurrent saves, and resolves each only once its change is on disk', async () => {
    const path = join(tempDir(), 'state.json');
    const state = countingState();
    const file = new StateFile(path, state);
    const saves = Array.from({ length: 100 }, async () => {
      const mine = ++state.version;
      await file.save();
      expect(JSON.parse(readFileSync(path, 'utf8')).version).toBeGreaterThanOrEqual(mine);
    });
    await Promise.all(saves);
    // The first save starts a write at once; the other 99 share the next one.
    expect(state.encoded).toBe(2);
    expect(JSON.parse(readFileSync(path, 'utf8')).version).toBe(100);
  });

  it('never leaves a temp file behind and keeps the file private', async () => {
    const dir = tempDir();
    const path = join(dir, 'state.json');
    const state = countingState();
    const file = new StateFile(path, state);
    for (let i = 0; i < 5; i++) {
      state.version++;
      await file.save();
    }
    expect(readdirSync(dir)).toEqual(['state.json']);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('flush writes only when something changed since the last write', async () => {
    const path = join(tempDir(), 'state.json');
    const state = countingState();
    const file = new StateFile(path, state);
    state.version++;
    await file.save();
    await file.flush();
    expect(state.encoded).toBe(1);
    state.version++;
    await file.flush();
    expect(state.encoded).toBe(2);
  });

  it('rejects every waiter of a failed write, and recovers on the next save', async () => {
    const dir = tempDir();
    const path = join(dir, 'missing-dir', 'state.json');
    const state = countingState();
    const file = new StateFile(path, state);
    const results = await Promise.allSettled([file.save(), file.save(), file.save()]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    const good = new StateFile(join(dir, 'state.json'), state);
    await expect(good.save()).resolves.toBeUndefined();
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
    await new StateFile(path, store).save();
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
      const saved = JSON.parse(readFileSync(path, 'utf8'));
      expect(saved.keys).toHaveLength(1);
      expect(saved.workspaces[0].plan).toBe('starter');
      expect(readFileSync(path, 'utf8')).not.toContain(server.ready.apiKey!.slice(3));
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
