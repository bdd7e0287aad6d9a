// tier: in-process
/**
 * A failed save undoes its changes (docs/contract.md §B): StateFile with group
 * commit and Store.takeChanges' undo, with a write made to fail for real (its
 * directory removed when the write begins), so no root is needed here.
 * The tmpfs tests in save-failure.test.ts do the same through HTTP.
 */
import { existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { apiRouter, type ApiHandler } from '../../src/server/api.js';
import { Clock } from '../../src/server/clock.js';
import { describeFsError, StateFile, StateFileError } from '../../src/server/persistence.js';
import { Store, type StoredKey, type UserState } from '../../src/server/store.js';
import { savedState } from '../helpers/saved-state.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A store saved to a real file, whose writes fail from the moment `breakDisk()` is called until `repairDisk()`:
 * the directory is moved away, as a disk that vanished, and back. An open journal file can still be written
 * then, so the write's check before it appends (the lock's, in the server) is where that is found, as a file
 * made there finds it.
 */
async function savedStore() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-rollback-'));
  dirs.push(dir, `${dir}.away`);
  const path = join(dir, 'state.json');
  let now = Date.parse('2026-01-01T00:00:00.000Z');
  const clock = new Clock(() => now);
  const store = new Store(clock);
  const { user } = store.createUser('u', 'free');
  const kept = store.createKey(user, 'kept', null).key;
  let broken = false;
  const verify = async () => {
    if (!broken) return;
    if (existsSync(dir)) renameSync(dir, `${dir}.away`);
    try {
      await (await open(join(dir, 'probe'), 'wx')).close();
    } catch (error) {
      throw new StateFileError(`cannot write ${path}: ${describeFsError(error as NodeJS.ErrnoException)}`);
    }
  };
  const warnings: string[] = [];
  const file = await StateFile.create(path, store, { warn: (message) => warnings.push(message), verify });
  return {
    store,
    user,
    kept,
    file,
    path,
    warnings,
    tick: (ms: number) => (now += ms),
    breakDisk: () => (broken = true),
    repairDisk: () => {
      broken = false;
      if (existsSync(`${dir}.away`)) renameSync(`${dir}.away`, dir);
    },
    onDisk: () => savedState(path),
  };
}

const names = (store: Store, user: UserState) => store.userKeys(user).map((k) => k.name);

describe('StateFile and Store after a failed write', () => {
  it('undoes the failed write and everything queued behind it, keeps what was saved before, and rejects each waiter', async () => {
    const s = await savedStore();
    const touched = s.store.createKey(s.user, 'touched', null).key;
    await s.file.save();
    // W1 carries the disable of `kept` and succeeds; three changes queue behind it, for W2, which fails.
    s.store.setEnabled(s.kept, false);
    const w1 = s.file.save();
    const doomed = s.store.createKey(s.user, 'doomed', null).key;
    const w2a = s.file.save();
    s.store.deleteKey(s.kept);
    s.store.setEnabled(touched, false);
    const w2b = s.file.save();
    const durable = s.file.whenDurable();
    s.breakDisk();
    await expect(w1).resolves.toBeUndefined();
    // lastUsedAt is saved lazily and a use is not undone: it survives the rollback.
    s.tick(5_000);
    s.store.recordUse(touched);
    const usedAt = touched.lastUsedAt;
    for (const waiter of [w2a, w2b, durable]) await expect(waiter).rejects.toBeInstanceOf(StateFileError);

    expect(names(s.store, s.user).sort()).toEqual(['kept', 'touched']);
    expect(s.store.userKey(s.user, doomed.id)).toBeUndefined();
    expect(s.store.keyByHash(doomed.hash)).toBeUndefined();
    // The revoked key is back as W1 saved it: disabled.
    expect(s.store.keyByHash(s.kept.hash)).toMatchObject({ id: s.kept.id, enabled: false });
    // A record that was only changed is the same object, in place: requests in flight hold it.
    expect(s.store.userKey(s.user, touched.id)).toBe(touched);
    expect(touched).toMatchObject({ enabled: true, lastUsedAt: usedAt });
    expect(s.warnings).toEqual([expect.stringMatching(/cannot write .*state\.json: its directory does not exist; the changes since the last save were undone/)]);

    s.repairDisk();
    s.store.createKey(s.user, 'after', null);
    await s.file.save();
    const saved = (await s.onDisk()).keys as { name: string; enabled: boolean }[];
    expect(saved.map((k) => [k.name, k.enabled]).sort()).toEqual([['after', true], ['kept', false], ['touched', true]]);
  });

  it('a failed first write rejects the callers that joined it and those queued behind it', async () => {
    const s = await savedStore();
    const before = s.store.toSnapshot();
    s.breakDisk();
    s.store.createKey(s.user, 'one', null);
    const first = s.file.save();
    const { user } = s.store.createUser('v', 'pro');
    s.store.createKey(user, 'two', null);
    s.store.setPlan(s.store.workspace(s.user.activeWorkspaceId)!, 'creator');
    const queued = [s.file.save(), s.file.save()];
    const results = await Promise.allSettled([first, ...queued]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(s.store.toSnapshot()).toEqual(before);
    expect(s.store.user(user.id)).toBeUndefined();

    // Failing again goes back to the same state again.
    s.store.setEnabled(s.kept, false);
    await expect(s.file.save()).rejects.toBeInstanceOf(StateFileError);
    expect(s.store.toSnapshot()).toEqual(before);
  });

  it('flush on shutdown rejects instead of throwing later, and leaves memory as it was', async () => {
    const s = await savedStore();
    s.store.recordUse(s.kept);
    s.breakDisk();
    await expect(s.file.flush()).rejects.toBeInstanceOf(StateFileError);
    expect(s.store.userKey(s.user, s.kept.id)).toBe(s.kept);
    expect(s.kept.lastUsedAt).not.toBeNull();
  });
});

describe('answers that change nothing wait for the change they rest on', () => {
  function handler(s: Awaited<ReturnType<typeof savedStore>>, method: string, id: string): (body?: Record<string, unknown>) => ReturnType<ApiHandler> {
    const router = apiRouter({ store: s.store, now: () => Date.now(), save: () => s.file.save(), whenDurable: () => s.file.whenDurable() });
    const match = router.match(method, `/user/api-keys/${id}`);
    if (match.kind !== 'found') throw new Error(`no ${method} handler`);
    return (body = {}) => match.handler({ key: s.kept, user: s.user, params: match.params, body });
  }

  it('a second revoke while the first is being saved is no 404 when that save fails: the key is back, and it says 503', async () => {
    const s = await savedStore();
    const target: StoredKey = s.store.createKey(s.user, 'target', null).key;
    await s.file.save();
    s.breakDisk();
    const first = handler(s, 'DELETE', target.id)();
    const second = handler(s, 'DELETE', target.id)();
    const disable = handler(s, 'PATCH', target.id)({ enabled: false });
    await expect(first).rejects.toBeInstanceOf(StateFileError);
    await expect(second).rejects.toBeInstanceOf(StateFileError);
    // It ran while the key was gone, so its 404 waited too.
    await expect(disable).rejects.toBeInstanceOf(StateFileError);
    expect(s.store.userKey(s.user, target.id)).toMatchObject({ id: target.id, hash: target.hash, enabled: true });
  });

  it('when that save succeeds, the second revoke is the 404 it always was, and an already-disabled key is 204', async () => {
    const s = await savedStore();
    const target = s.store.createKey(s.user, 'target', null).key;
    await s.file.save();
    const first = handler(s, 'DELETE', target.id)();
    const second = handler(s, 'DELETE', target.id)();
    await expect(first).resolves.toMatchObject({ status: 200 });
    await expect(second).rejects.toMatchObject({ status: 404 });

    const other = s.store.createKey(s.user, 'other', null).key;
    await s.file.save();
    const disable = handler(s, 'PATCH', other.id)({ enabled: false });
    const again = handler(s, 'PATCH', other.id)({ enabled: false });
    await expect(disable).resolves.toMatchObject({ status: 200 });
    await expect(again).resolves.toEqual({ status: 204 });
  });
});
