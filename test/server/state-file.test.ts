// tier: in-process
/**
 * The journal carries what changed, taken from the store's record of its
 * changes (Store.takeChanges). A change it missed would be silent data loss,
 * and an undo that left memory ahead of the disk would serve what was never
 * saved; so random sequences of every kind of change, of failed saves and of
 * compactions are checked: after each save, what a restart would load (the
 * snapshot and the journal) is what memory holds.
 */
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PLANS } from '../../src/contract/plans.js';
import { Clock } from '../../src/server/clock.js';
import { loadState, StateFile, StateFileError } from '../../src/server/persistence.js';
import type { Snapshot } from '../../src/server/snapshot.js';
import { Store } from '../../src/server/store.js';
import { nameProblem } from '../../src/server/validation.js';

const root = mkdtempSync(join(tmpdir(), 'svc-state-file-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Names as the API stores them (trimmed, then nameProblem's rule): the loader refuses any other. */
const name = fc.string({ minLength: 1, maxLength: 20 }).filter((text) => text === text.trim() && nameProblem(text) === null);

const op = fc.oneof(
  fc.record({ kind: fc.constant('create-key' as const), user: fc.nat(), name, expires: fc.boolean() }),
  fc.record({ kind: fc.constant('set-enabled' as const), key: fc.nat(), enabled: fc.boolean() }),
  fc.record({ kind: fc.constant('use' as const), key: fc.nat() }),
  fc.record({ kind: fc.constant('delete' as const), key: fc.nat() }),
  fc.record({ kind: fc.constant('create-user' as const), name, plan: fc.constantFrom(...PLANS) }),
  fc.record({ kind: fc.constant('create-workspace' as const), user: fc.nat(), plan: fc.constantFrom(...PLANS) }),
  fc.record({ kind: fc.constant('set-plan' as const), workspace: fc.nat(), plan: fc.constantFrom(...PLANS) }),
  fc.record({ kind: fc.constant('switch-workspace' as const), user: fc.nat(), workspace: fc.nat() }),
  fc.record({ kind: fc.constant('reset' as const), plan: fc.constantFrom(...PLANS) }),
  fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 5_000 }) }),
  fc.constant({ kind: 'save' as const }),
  fc.constant({ kind: 'failed-save' as const }),
);

/** Records in id order, lastUsedAt left out: that is saved lazily, and an undo leaves a use standing. */
const comparable = (snapshot: Snapshot) => ({
  users: [...snapshot.users].sort((a, b) => a.id.localeCompare(b.id)),
  workspaces: [...snapshot.workspaces].sort((a, b) => a.id.localeCompare(b.id)),
  keys: snapshot.keys.map((k) => ({ ...k, lastUsedAt: null })).sort((a, b) => a.id.localeCompare(b.id)),
});

let run = 0;

describe('StateFile and Store.takeChanges', () => {
  it('a restart loads what memory holds after every save, however records changed, saves failed or compactions came', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 30 }), async (ops) => {
        const path = join(root, `state-${run++}.json`);
        let now = Date.parse('2026-01-01T00:00:00.000Z');
        const clock = new Clock(() => now);
        const store = new Store(clock);
        store.createUser('first', 'free');
        let failing = false;
        const file = await StateFile.create(path, store, {
          compactAfterBytes: 1,
          verify: async () => {
            if (failing) throw new StateFileError('cannot check the lock: for this test');
          },
        });
        const pick = <T>(items: T[], n: number): T | undefined => (items.length === 0 ? undefined : items[n % items.length]);
        const users = () => store.toSnapshot().users.map((u) => store.user(u.id)!);
        const keys = () => users().flatMap((u) => store.userKeys(u));

        const change = (o: (typeof ops)[number]) => {
          switch (o.kind) {
            case 'create-key':
              store.createKey(pick(users(), o.user)!, o.name, o.expires ? now + 86_400_000 : null);
              break;
            case 'set-enabled': {
              const key = pick(keys(), o.key);
              if (key) store.setEnabled(key, o.enabled);
              break;
            }
            case 'use': {
              const key = pick(keys(), o.key);
              if (key) store.recordUse(key);
              break;
            }
            case 'delete': {
              const key = pick(keys(), o.key);
              if (key) store.deleteKey(key);
              break;
            }
            case 'create-user':
              store.createUser(o.name, o.plan);
              break;
            case 'create-workspace':
              store.createWorkspace(pick(users(), o.user)!, 'W', o.plan);
              break;
            case 'set-plan': {
              const id = pick(store.toSnapshot().workspaces, o.workspace)!.id;
              store.setPlan(store.workspace(id)!, o.plan);
              break;
            }
            case 'switch-workspace': {
              const user = pick(users(), o.user)!;
              store.setActiveWorkspace(user, store.workspace(pick(user.workspaceIds, o.workspace)!)!);
              break;
            }
            case 'reset':
              store.reset(o.plan);
              break;
            case 'tick':
              now += o.ms;
              break;
          }
        };

        // A compaction may still be writing beside the appends: the files are read once it is done.
        const onDisk = async () => {
          await file.whenIdle();
          return comparable((await loadState(path))!);
        };
        for (const o of ops) {
          if (o.kind === 'save') {
            await file.save();
            expect(await onDisk()).toEqual(comparable(store.toSnapshot()));
          } else if (o.kind === 'failed-save') {
            const durable = await onDisk();
            failing = true;
            const { key: doomed } = store.createKey(users()[0]!, 'doomed', null);
            await expect(file.save()).rejects.toBeInstanceOf(StateFileError);
            failing = false;
            // Back to what is on disk, which is what memory held before the changes the failed save carried
            // (a delete among them comes back), and without the key made for the failed save.
            expect(comparable(store.toSnapshot())).toEqual(durable);
            expect(store.toSnapshot().keys.map((k) => k.id)).not.toContain(doomed.id);
          } else change(o);
        }
        await file.flush();
        const loaded = (await loadState(path))!;
        expect(comparable(loaded)).toEqual(comparable(store.toSnapshot()));
        // Flushed, lastUsedAt too is on disk.
        const used = new Map(store.toSnapshot().keys.map((k) => [k.id, k.lastUsedAt]));
        for (const key of loaded.keys) expect(key.lastUsedAt).toBe(used.get(key.id));
      }),
      { numRuns: 40 },
    );
  });
});
