/**
 * Whether each key a scan found works, and whose it is (docs/contract.md
 * §C11), against the profile's server alone. First by the key lists of
 * the user's own profiles on that server, by hint, without sending the
 * found key anywhere; then, unless `own` alone is asked, with the found
 * key itself, which touches its last use. Only the server's refusal (401)
 * makes a key "not live": a rate limit beyond the wait, a network
 * failure or an answer svc cannot read leaves it "not checked", never
 * guessed. Keys are checked several at once, so that the time is the
 * rate limits' (per workspace), not one round trip after another.
 */
import type { ApiClient, KeyPage } from '../../client/api.js';
import { ApiError, NetworkError, RateLimitedError, UnexpectedResponseError } from '../../client/errors.js';
import { keyStatus, readKey, type KeyView } from '../../client/key-view.js';
import { apiPaths } from '../../contract/paths.js';
import { keyHint } from '../../contract/key-format.js';

export type VerifyMode = 'key' | 'own' | 'none';

/** Whose a live key is, as far as a list shows it. */
export interface Owner {
  record: KeyView;
  /** The record as the server sent it. */
  document: unknown;
  /** The profile whose key list holds it; null when only the found key's own list does (another account's key). */
  profile: string | null;
}

export type Verdict =
  /** `by`: the found key's own request answered (key), or only a hint in one of the user's lists matched (hint, with --verify own). `owner` null: live, but no list svc could read shows which key it is. */
  | { state: 'live'; by: 'key' | 'hint'; owner: Owner | null }
  /** The server refused the key (401): `disabled` or `expired` where a list of the user's shows it so, else refused (unknown, revoked, or disabled or expired in an account svc cannot see). */
  | { state: 'not-live'; why: 'refused' | 'disabled' | 'expired'; owner: Owner | null }
  | { state: 'not-checked'; why: string };

/** A list of one of the user's own profiles on the server: read, or why not. */
export interface OwnList {
  profile: string;
  keys: KeyView[];
  documents: unknown[];
  nowMs: number;
  /** The hint of the profile's key, to tell its workspace by. */
  keyHint: string;
  failure: unknown;
}

export interface VerifyContext {
  /** The clients of the user's own profiles on the profile's server, by profile name. */
  own: readonly { profile: string; client: ApiClient }[];
  /** A client for `apiKey` to the profile's server (never another). */
  connect: (apiKey: string) => Promise<ApiClient>;
  /** Told as each key's check ends. */
  onChecked?: (done: number, total: number) => void;
}

/** How many keys are checked at once: enough to keep several workspaces' allowance busy, few enough not to crowd one. */
const AT_ONCE = 8;

export interface Verification {
  verdicts: Map<string, Verdict>;
  own: OwnList[];
}

/** `keys`: the distinct keys found; the verdicts are by key. */
export async function verifyFoundKeys(ctx: VerifyContext, keys: readonly string[], mode: VerifyMode): Promise<Verification> {
  const verdicts = new Map<string, Verdict>();
  if (mode === 'none') {
    for (const key of keys) verdicts.set(key, { state: 'not-checked', why: '--no-verify' });
    return { verdicts, own: [] };
  }
  const own = await Promise.all(ctx.own.map(readOwnList));
  const byHint = new Map<string, { list: OwnList; index: number }[]>();
  for (const list of own) {
    list.keys.forEach((record, index) => {
      if (record.hint === null) return;
      const seen = byHint.get(record.hint) ?? [];
      // The same key in two profiles' lists (one account) is one match.
      if (!seen.some((s) => s.list.keys[s.index]!.id === record.id)) seen.push({ list, index });
      byHint.set(record.hint, seen);
    });
  }
  let done = 0;
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++]!;
      verdicts.set(key, await verifyOne(ctx, key, byHint.get(keyHint(key)) ?? [], mode, own));
      ctx.onChecked?.(++done, keys.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, keys.length) }, worker));
  return { verdicts, own };
}

async function readOwnList({ profile, client }: { profile: string; client: ApiClient }): Promise<OwnList> {
  try {
    const list = await client.listAllKeys();
    return { profile, keys: list.keys, documents: list.documents, nowMs: list.nowMs, keyHint: client.keyHint, failure: null };
  } catch (error) {
    if (!couldNotCheck(error)) throw error;
    return { profile, keys: [], documents: [], nowMs: 0, keyHint: client.keyHint, failure: error };
  }
}

async function verifyOne(ctx: VerifyContext, key: string, matches: readonly { list: OwnList; index: number }[], mode: VerifyMode, own: readonly OwnList[]): Promise<Verdict> {
  const match = matches.length === 1 ? matches[0]! : null;
  const owner = match ? { record: match.list.keys[match.index]!, document: match.list.documents[match.index], profile: match.list.profile } : null;
  if (owner) {
    const status = keyStatus(owner.record, match!.list.nowMs);
    // Whatever the found string is, it does not work: that key of the user's is off, and no other key has its hint there.
    if (status === 'disabled' || status === 'expired') return { state: 'not-live', why: status, owner };
  }
  if (mode === 'own') {
    if (owner) return { state: 'live', by: 'hint', owner };
    if (matches.length > 1) return { state: 'not-checked', why: `${matches.length} keys in your lists share its hint; --verify own does not send the key to tell them apart` };
    const unread = own.filter((list) => list.failure !== null).length;
    return { state: 'not-checked', why: unread === own.length && own.length > 0 ? 'your key lists could not be read' : own.length === 0 ? 'no profile key to read a key list with' : 'not in your key lists; --verify own does not send the key itself' };
  }
  let client: ApiClient;
  try {
    client = await ctx.connect(key);
  } catch (error) {
    return { state: 'not-checked', why: (error as Error).message };
  }
  try {
    // The key's own record, asked with the key: a 200 says both that it works and that the user it belongs to owns that id.
    if (owner?.record.id) {
      const confirmed = await recordWith(client, owner.record.id, owner.profile);
      if (confirmed !== null) return { state: 'live', by: 'key', owner: confirmed };
    }
    return { state: 'live', by: 'key', owner: await findOwnRecord(client) };
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return { state: 'not-live', why: 'refused', owner: null };
    if (couldNotCheck(error)) return { state: 'not-checked', why: whyNotChecked(error) };
    throw error;
  }
}

/** GET /user/api-keys/{id} with the found key: its record, or null where that does not tell (no such endpoint, another id). 401 and what cannot be checked are thrown. */
async function recordWith(client: ApiClient, id: string, profile: string | null): Promise<Owner | null> {
  try {
    const { body } = await client.request<unknown>('GET', apiPaths.key(id));
    const record = readKey(body);
    return record.id === id && record.hint === client.keyHint ? { record, document: body, profile } : null;
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 429 || error.status >= 500)) throw error;
    if (error instanceof ApiError || error instanceof UnexpectedResponseError) return null;
    throw error;
  }
}

/** The found key's own list, read with it until its record shows (by hint): exactly one record with that hint is its; none or several, no owner. */
async function findOwnRecord(client: ApiClient): Promise<Owner | null> {
  const hint = client.keyHint;
  const found: Owner[] = [];
  await client.listAllKeys({
    onPage: (page: KeyPage) => {
      page.keys.forEach((record, i) => {
        if (record.hint === hint) found.push({ record, document: page.documents[i], profile: null });
      });
    },
  });
  return found.length === 1 ? found[0]! : null;
}

function couldNotCheck(error: unknown): boolean {
  return error instanceof ApiError || error instanceof RateLimitedError || error instanceof NetworkError || error instanceof UnexpectedResponseError;
}

function whyNotChecked(error: unknown): string {
  if (error instanceof RateLimitedError) return `rate limited beyond the wait (retry in ${error.retryAfterSeconds} s, or give --max-wait)`;
  if (error instanceof ApiError) return `the server answered ${error.status}${error.body?.error ? `: ${error.body.error}` : ''}`;
  if (error instanceof NetworkError) return `the server could not be reached: ${error.message}`;
  return (error as Error).message;
}
