// tier: in-process
/**
 * Store.stateFileParts reuses each key's saved line while the key is
 * unchanged. A stale line would be silent data loss, so random sequences
 * of every kind of change are checked against toSnapshot(), the plain
 * serialisation, after each save.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PLANS } from '../../src/contract/plans.js';
import { Clock } from '../../src/server/clock.js';
import { parseSnapshot, type Snapshot } from '../../src/server/snapshot.js';
import { Store } from '../../src/server/store.js';
import { nameProblem } from '../../src/server/validation.js';

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
  fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 5_000 }) }),
  fc.constant({ kind: 'save' as const }),
  fc.constant({ kind: 'rollback' as const }),
);

const withoutLastUse = (snapshot: Snapshot) => ({ ...snapshot, keys: snapshot.keys.map((k) => ({ ...k, lastUsedAt: null })) });

describe('Store.stateFileParts', () => {
  it('always says what toSnapshot says, however keys, users and workspaces changed since the last save, or were rolled back to it', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        let now = Date.parse('2026-01-01T00:00:00.000Z');
        const clock = new Clock(() => now);
        const store = new Store(clock);
        store.createUser('first', 'free');
        const pick = <T>(items: T[], n: number): T | undefined => (items.length === 0 ? undefined : items[n % items.length]);
        const users = () => [...store.toSnapshot().users.map((u) => store.user(u.id)!)];
        const keys = () => users().flatMap((u) => store.userKeys(u));

        const check = () => {
          const text = Buffer.concat(store.stateFileParts()).toString('utf8');
          const parsed = JSON.parse(text);
          expect(parsed).toEqual(store.toSnapshot());
          expect(Store.fromSnapshot(parseSnapshot(parsed), clock).toSnapshot()).toEqual(store.toSnapshot());
          // One record per line keeps the file readable and diffable.
          expect(text.split('\n').length).toBeGreaterThanOrEqual(parsed.keys.length + parsed.users.length);
        };

        let saved = store.toSnapshot();
        for (const o of ops) {
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
            case 'tick':
              now += o.ms;
              break;
            case 'save':
              check();
              saved = store.toSnapshot();
              break;
            case 'rollback': {
              // As after a failed save: back to the last saved state, in place, a used key keeping its lastUsedAt.
              const lastUsed = new Map(keys().map((k) => [k.id, k.lastUsedAt]));
              store.restore(saved);
              const back = store.toSnapshot();
              expect(withoutLastUse(back)).toEqual(withoutLastUse(saved));
              for (const k of keys()) {
                if (lastUsed.has(k.id)) expect(k.lastUsedAt).toBe(lastUsed.get(k.id));
              }
              check();
              break;
            }
          }
        }
        check();
      }),
      { numRuns: 300 },
    );
  });
});
