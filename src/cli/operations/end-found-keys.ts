/**
 * `svc scan --revoke` (docs/contract.md §C11): the live keys a scan found
 * and could name are revoked through the one engine (change-keys.ts), by
 * the profile's key where the found key's workspace is the profile's, else
 * by the found key itself; then each is tried once more with its own
 * secret, which must now be refused. A live key whose record no list
 * showed is left: svc revokes only a key it can name.
 */
import type { ApiClient } from '../../client/api.js';
import { PROBE } from '../../client/api.js';
import { ApiError } from '../../client/errors.js';
import { changeKeys, type ChangeEvents, type KeyResult } from './change-keys.js';
import type { KeysContext } from './context.js';
import type { OwnList } from './verify-found.js';

export interface EndContext extends Omit<KeysContext, 'client'> {
  /** The profile's client, when it has a key, and the workspace that key is anchored to, when its list showed it. */
  profile: { client: ApiClient; workspaceId: string | null } | null;
  connect: (apiKey: string) => Promise<ApiClient>;
}

export interface ToEnd {
  key: string;
  id: string;
  name: string | null;
  workspaceId: string | null;
  /** The key is in the profile's own key list: the profile's key can revoke it. */
  inProfileList: boolean;
}

export interface Ended {
  key: string;
  /** What the engine did with it. */
  result: KeyResult;
  /** By whose key: the profile's, or the found key's own. */
  by: 'profile' | 'found';
  /** After a revoke: the key's own secret was refused (true), still answered (false), or could not be tried (null). */
  refused: boolean | null;
}

/** The workspace of the profile's key, by its hint in the profile's own list; null where it is not there once. */
export function profileWorkspace(own: readonly OwnList[], profile: string): string | null {
  const list = own.find((l) => l.profile === profile);
  const mine = list?.keys.filter((k) => k.hint === list.keyHint) ?? [];
  return mine.length === 1 ? mine[0]!.workspaceId : null;
}

/**
 * Which key revokes `target`: the profile's, for a key of the profile's own
 * list in the workspace of the profile's key (`profileWorkspace`); any
 * other (another account's, a teammate's in a shared workspace, one of
 * the user's other workspaces) is revoked with its own secret.
 */
export function revokedBy(target: Pick<ToEnd, 'inProfileList' | 'workspaceId'>, profileWorkspaceId: string | null, hasProfileKey: boolean): 'profile' | 'itself' {
  return hasProfileKey && target.inProfileList && target.workspaceId !== null && target.workspaceId === profileWorkspaceId ? 'profile' : 'itself';
}

/** Tries a revoked key this often, a second apart: the spec lets a revoked key work for a few seconds. */
const REFUSAL_LOOKS = 5;

export async function endFoundKeys(ctx: EndContext, keys: readonly ToEnd[], events: ChangeEvents = {}): Promise<Ended[]> {
  const ended: Ended[] = [];
  const byProfile = keys.filter((k) => revokedBy(k, ctx.profile?.workspaceId ?? null, ctx.profile !== null) === 'profile');
  const byItself = keys.filter((k) => !byProfile.includes(k));
  const base = { onSignal: ctx.onSignal, now: ctx.now, sleep: ctx.sleep };
  if (byProfile.length > 0) {
    const run = await changeKeys(
      { ...base, client: ctx.profile!.client },
      { change: 'revoke', targets: { keys: byProfile.map(({ id, name }) => ({ id, name })) }, keepGoing: true, goneIsDone: true },
      events,
    );
    run.results.forEach((result, i) => ended.push({ key: byProfile[i]!.key, result, by: 'profile', refused: null }));
    if (run.stoppedBy !== null) return finish(ctx, ended, byItself);
  }
  for (const [i, target] of byItself.entries()) {
    const client = await ctx.connect(target.key);
    const run = await changeKeys({ ...base, client }, { change: 'revoke', targets: { keys: [{ id: target.id, name: target.name }] }, goneIsDone: true }, events);
    ended.push({ key: target.key, result: run.results[0]!, by: 'found', refused: null });
    if (run.stoppedBy !== null) return finish(ctx, ended, byItself.slice(i + 1));
  }
  return finish(ctx, ended, []);
}

/** Each revoked key tried with its own secret; those not tried are told as such. */
/**
 * Each key a revoke was tried on, tried with its own secret: one whose
 * revoke failed may be refused all the same (another revoke ended it
 * first, and its own DELETE was answered 401), and is then told as gone.
 */
async function finish(ctx: EndContext, ended: Ended[], notTried: readonly ToEnd[]): Promise<Ended[]> {
  for (const entry of ended) {
    if (entry.result.state === 'not-tried') continue;
    entry.refused = await refusedNow(ctx, await ctx.connect(entry.key));
    if (entry.result.state === 'failed' && entry.refused) entry.result = { state: 'gone', arg: entry.result.arg, id: entry.result.id };
  }
  for (const target of notTried) ended.push({ key: target.key, result: { state: 'not-tried', arg: target.id }, by: 'found', refused: null });
  return ended;
}

async function refusedNow(ctx: EndContext, client: ApiClient): Promise<boolean | null> {
  for (let look = 1; ; look++) {
    try {
      await client.probeKeyList(PROBE);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return true;
      return null;
    }
    if (look === REFUSAL_LOOKS) return false;
    await ctx.sleep(1000);
  }
}
