// tier: in-process
/**
 * docs/contract.md §A5: the list comes in pages (`limit`, `cursor`,
 * `nextCursor`), every key exactly once, newest first, whatever happens
 * between pages; and §B: every answer's Date is the time it was sent.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Clock } from '../../src/server/clock.js';
import { Store } from '../../src/server/store.js';
import { startTestServer, type TestServer } from './helpers.js';

type Page = { keys: { id: string; name: string }[]; nextCursor: string | null };

let t: TestServer;
/** The bootstrap key of the fresh world each test starts in. */
let key: string;
beforeAll(async () => {
  t = await startTestServer({ plan: 'pro', pageSize: 7 });
});
afterAll(() => t.close());
beforeEach(async () => {
  key = (await t.admin('POST', '/reset')).json.apiKey;
  await t.startOfNextWindow();
});

async function page(query = '', as = key): Promise<Page> {
  const res = await t.api('GET', `/user/api-keys${query}`, { key: as });
  expect(res.status, res.text).toBe(200);
  return res.json as Page;
}

/** Every page from the first, with `limit` when given; `between` runs after each page. */
async function allPages(limit?: number, between: (n: number) => Promise<void> = async () => {}): Promise<Page[]> {
  const pages: Page[] = [];
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams();
    if (limit !== undefined) query.set('limit', String(limit));
    if (cursor !== null) query.set('cursor', cursor);
    const text = query.toString();
    pages.push(await page(text ? `?${text}` : ''));
    cursor = pages.at(-1)!.nextCursor;
    await between(pages.length);
  } while (cursor !== null);
  return pages;
}

async function createKeys(count: number, prefix = 'k'): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await t.api('POST', '/user/api-keys', { key, body: { name: `${prefix}${i}` } });
    expect(res.status, res.text).toBe(201);
    ids.push(res.json.id);
  }
  return ids;
}

describe('GET /user/api-keys in pages', () => {
  it('serves the page size without a limit, and names the next page until the last', async () => {
    const ids = await createKeys(15);
    const pages = await allPages();
    expect(pages.map((p) => p.keys.length)).toEqual([7, 7, 2]);
    expect(pages.map((p) => p.nextCursor === null)).toEqual([false, false, true]);
    const listed = pages.flatMap((p) => p.keys.map((k) => k.id));
    // Newest first: the 15 made here in reverse, then the bootstrap key.
    expect(listed.slice(0, 15)).toEqual([...ids].reverse());
    expect(pages[2]!.keys.at(-1)!.name).toBe('bootstrap');
  });

  it('takes a smaller limit, and gives the page size for a larger one', async () => {
    await createKeys(9);
    expect((await allPages(4)).map((p) => p.keys.length)).toEqual([4, 4, 2]);
    expect((await allPages(1000)).map((p) => p.keys.length)).toEqual([7, 3]);
    expect((await page('?limit=10')).keys).toHaveLength(7);
  });

  it('lists a key made or revoked between pages neither twice nor never', async () => {
    const ids = await createKeys(20);
    const revoked = new Set<string>();
    const pages = await allPages(5, async (n) => {
      if (n !== 1) return;
      // One key of a later page gone, one already listed gone, and a new key, newer than every cursor.
      for (const id of [ids[3]!, ids[19]!]) {
        expect((await t.api('DELETE', `/user/api-keys/${id}`, { key })).status).toBe(200);
        revoked.add(id);
      }
      await createKeys(1, 'meanwhile');
    });
    const listed = pages.flatMap((p) => p.keys.map((k) => k.id));
    expect(new Set(listed).size).toBe(listed.length);
    const expected = [...ids].reverse().filter((id) => !revoked.has(id) || id === ids[19]);
    expect(listed.filter((id) => ids.includes(id))).toEqual(expected);
    expect(pages.flatMap((p) => p.keys).some((k) => k.name === 'meanwhile0')).toBe(false);
  });

  it('keeps keys made in the same millisecond in reverse order of making, across a page edge', () => {
    const clock = new Clock(() => 1_700_000_000_000);
    const store = new Store(clock);
    const { user } = store.createUser('u', 'free');
    const made = Array.from({ length: 5 }, (_, i) => store.createKey(user, `same-${i}`, null).key.id);
    const first = store.keyPage(user, 3, null);
    const second = store.keyPage(user, 3, first.next);
    expect([...first.keys, ...second.keys].map((k) => k.name)).toEqual(['same-4', 'same-3', 'same-2', 'same-1', 'same-0']);
    expect(second.next).toBeNull();
    store.deleteKey(store.userKey(user, made[1]!)!);
    expect(store.keyPage(user, 10, first.next).keys.map((k) => k.name)).toEqual(['same-0']);
  });

  it('refuses a limit or a cursor that is not one, 400 INVALID_REQUEST', async () => {
    for (const query of ['?limit=0', '?limit=-1', '?limit=abc', '?limit=1.5', '?limit=', '?cursor=nope', '?cursor=', '?cursor=1.2.3']) {
      const res = await t.api('GET', `/user/api-keys${query}`, { key });
      expect(res.status, query).toBe(400);
      expect(res.json.code).toBe('INVALID_REQUEST');
    }
  });

  it('answers every user their own pages only', async () => {
    await createKeys(8);
    const other = (await t.admin('POST', '/users', { name: 'other', plan: 'pro' })).json.apiKey.secret as string;
    const first = await page('', other);
    expect(first.keys).toHaveLength(1);
    expect(first.nextCursor).toBeNull();
  });
});

describe('the Date of an answer', () => {
  it('is the server clock when the answer is sent, not when the request came', async () => {
    await t.admin('POST', '/faults', { rules: [{ method: 'GET', path: '/workspace', delayMs: 1500 }] });
    const before = Date.parse((await t.admin('GET', '/clock')).json.now);
    const answer = t.api('GET', '/workspace', { key });
    // Once the request has met its rule (it is waiting out the delay), the server's clock moves on an hour.
    while ((await t.admin('GET', '/faults')).json.rules.length > 0);
    await t.advance(3600);
    const res = await answer;
    expect(res.status).toBe(200);
    expect(Date.parse(res.headers.date as string)).toBeGreaterThanOrEqual(before + 3_600_000 - 1_000);
  });
});
