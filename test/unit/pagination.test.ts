// tier: in-process
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/client/api.js';
import { IncompleteListError, UnexpectedResponseError } from '../../src/client/errors.js';
import { DEFAULT_POLICY } from '../../src/client/policy.js';
import { nextPage, unfollowedMore } from '../../src/client/pagination.js';
import type { HttpRequest, HttpResponse } from '../../src/client/transport.js';

const BASE = 'https://svc.test/base';

describe('nextPage: where the next page of a key list is', () => {
  it('follows a Link header, a cursor, an address in `next`, and has_more with page numbers', () => {
    const path = '/user/api-keys';
    expect(nextPage(path, {}, '<https://svc.test/base/api/service/user/api-keys?page=2>; rel="next"', BASE)).toEqual({ path: '/user/api-keys?page=2' });
    expect(nextPage(path, {}, '</base/api/service/user/api-keys?after=k9>; rel="prev next"', BASE)).toEqual({ path: '/user/api-keys?after=k9' });
    expect(nextPage(path, {}, '<?page=1>; rel="prev", <?page=3>; rel=next', BASE)).toEqual({ path: '/user/api-keys?page=3' });
    expect(nextPage(path, { next_cursor: 'abc=' }, null, BASE)).toEqual({ path: '/user/api-keys?cursor=abc%3D' });
    expect(nextPage(path, { nextCursor: 'x' }, null, BASE)).toEqual({ path: '/user/api-keys?cursor=x' });
    expect(nextPage(path, { next: '/base/api/service/user/api-keys?p=2' }, null, BASE)).toEqual({ path: '/user/api-keys?p=2' });
    expect(nextPage(path, { next: 'opaque' }, null, BASE)).toEqual({ path: '/user/api-keys?cursor=opaque' });
    expect(nextPage(path, { has_more: true }, null, BASE)).toEqual({ path: '/user/api-keys?page=2' });
    expect(nextPage('/user/api-keys?page=2', { hasMore: true }, null, BASE)).toEqual({ path: '/user/api-keys?page=3' });
    expect(nextPage(path, { has_more: true, page: 4 }, null, BASE)).toEqual({ path: '/user/api-keys?page=5' });
  });

  it("follows JSON:API's links.next, HAL's _links.next.href and next_page_url", () => {
    const path = '/user/api-keys';
    expect(nextPage(path, { links: { next: '/base/api/service/user/api-keys?page[number]=2' } }, null, BASE)).toEqual({ path: '/user/api-keys?page[number]=2' });
    expect(nextPage(path, { links: { next: { href: '?page=2' } } }, null, BASE)).toEqual({ path: '/user/api-keys?page=2' });
    expect(nextPage(path, { _links: { next: { href: 'https://svc.test/base/api/service/user/api-keys?p=3' } } }, null, BASE)).toEqual({ path: '/user/api-keys?p=3' });
    expect(nextPage(path, { next_page_url: 'https://svc.test/base/api/service/user/api-keys?page=2' }, null, BASE)).toEqual({ path: '/user/api-keys?page=2' });
    expect(nextPage(path, { links: { next: 'https://evil.test/keys' } }, null, BASE)).toHaveProperty('foreign');
    expect(nextPage(path, { links: { next: null } }, null, BASE)).toBeNull();
  });

  it('tells a sign of more it cannot follow from the end of the list', () => {
    expect(unfollowedMore({ keys: [], next_page_token: 'abc' }, 20)).toMatch(/`next_page_token`, which svc does not know how to send back/);
    expect(unfollowedMore({ nextToken: 'x' }, 20)).toMatch(/`nextToken`/);
    expect(unfollowedMore({ total: 75 }, 20)).toBe('it says it holds 75 keys, but its pages held 20 and named no next page');
    expect(unfollowedMore({ total_count: 20 }, 20)).toBeNull();
    for (const body of [{}, { next_page_token: null }, { next_page_token: '' }, null, 'keys']) expect(unfollowedMore(body, 3), JSON.stringify(body)).toBeNull();
    expect(unfollowedMore({ nextCursor: {} }, 3)).toBe("its last page's `nextCursor` is object, not a cursor svc can send back");
    expect(unfollowedMore({ next: [2] }, 3)).toBe("its last page's `next` is a list, not a cursor svc can send back");
    expect(unfollowedMore({ next_cursor: 2.5 }, 3)).toBe("its last page's `next_cursor` is number, not a cursor svc can send back");
    for (const body of [{ next_cursor: false }, { nextCursor: '' }, { next: null }, { next_cursor: 0 }]) expect(unfollowedMore(body, 3), JSON.stringify(body)).toBeNull();
  });

  it('sends back a cursor given as a number, as text', () => {
    expect(nextPage('/user/api-keys', { nextCursor: 2 }, null, BASE)).toEqual({ path: '/user/api-keys?cursor=2' });
    expect(nextPage('/user/api-keys', { next_cursor: 0 }, null, BASE)).toBeNull();
    expect(nextPage('/user/api-keys', { next: 40 }, null, BASE)).toEqual({ path: '/user/api-keys?cursor=40' });
  });

  it('ends where nothing says there is more', () => {
    for (const body of [{}, { next_cursor: null }, { next_cursor: '' }, { has_more: false }, null, [], 'keys']) {
      expect(nextPage('/user/api-keys', body, null, BASE), JSON.stringify(body)).toBeNull();
    }
    expect(nextPage('/user/api-keys', {}, '<https://svc.test/x>; rel="prev"', BASE)).toBeNull();
  });

  it('will not follow a next page to another address, where the key would go', () => {
    for (const link of ['<https://evil.test/base/api/service/user/api-keys?page=2>; rel="next"', '<http://svc.test/base/api/service/user/api-keys>; rel="next"', '</other/api/service/user/api-keys>; rel="next"']) {
      expect(nextPage('/user/api-keys', {}, link, BASE), link).toHaveProperty('foreign');
    }
    expect(nextPage('/user/api-keys', { next: 'https://evil.test/steal' }, null, BASE)).toHaveProperty('foreign');
  });
});

function pagedClient(pages: Record<string, HttpResponse> | ((path: string) => HttpResponse | undefined)) {
  const requests: HttpRequest[] = [];
  const client = new ApiClient({
    baseUrl: BASE,
    apiKey: `sk_${'a'.repeat(64)}`,
    timeoutMs: 1000,
    policy: DEFAULT_POLICY,
    userAgent: 'svc/test',
    transport: async (req) => {
      requests.push(req);
      const path = req.url.slice(`${BASE}/api/service`.length);
      const page = typeof pages === 'function' ? pages(path) : pages[path];
      if (!page) throw new Error(`no page scripted for ${req.url}`);
      return page;
    },
    wait: async () => {},
    origin: { baseUrl: BASE, baseUrlSource: 'flag', overriddenBaseUrl: null, keyHint: 'sk_aaaa…aaaa', keySource: 'env', profile: 'default' },
  });
  return { client, requests };
}

const page = (body: unknown, headers: Record<string, string> = {}): HttpResponse => ({ status: 200, headers, text: JSON.stringify(body) });

describe('listAllKeys: the one list reader', () => {
  it('reads every page and gives --json one document without the paging fields', async () => {
    const { client, requests } = pagedClient({
      '/user/api-keys': page({ keys: [{ id: 'a' }, { id: 'b' }], next_cursor: '2', total: 3 }),
      '/user/api-keys?cursor=2': page({ keys: [{ id: 'c' }], next_cursor: null }),
    });
    const list = await client.listAllKeys();
    expect(list.keys.map((k) => k.id)).toEqual(['a', 'b', 'c']);
    expect(list.body).toEqual({ keys: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] });
    expect(list.pages).toBe(2);
    expect(requests).toHaveLength(2);
  });

  it('says so, instead of a list cut short, when the pages loop or lead elsewhere', async () => {
    const looping = pagedClient({
      '/user/api-keys': page({ keys: [{ id: 'a' }], next_cursor: '1' }),
      '/user/api-keys?cursor=1': page({ keys: [{ id: 'b' }], next_cursor: '1' }),
    });
    const loop = await looping.client.listAllKeys().catch((e) => e);
    expect(loop).toBeInstanceOf(UnexpectedResponseError);
    expect(loop.message).toMatch(/could not be read whole: its page 3 is one it sent before/);

    const away = pagedClient({ '/user/api-keys': page({ keys: [{ id: 'a' }] }, { link: '<https://evil.test/next>; rel="next"' }) });
    const error = await away.client.listAllKeys().catch((e) => e);
    expect(error.message).toMatch(/another address \(https:\/\/evil\.test\/next\), where svc does not send the key/);
    expect(away.requests).toHaveLength(1);
  });

  it('follows a next page named by an empty page, as AIP-158 allows, to the keys after it', async () => {
    const { client, requests } = pagedClient({
      '/user/api-keys': page({ keys: [], next_cursor: 'a' }),
      '/user/api-keys?cursor=a': page({ keys: [{ id: 'k1' }, { id: 'k2' }], next_cursor: 'b' }),
      '/user/api-keys?cursor=b': page({ keys: [], next_cursor: 'c' }),
      '/user/api-keys?cursor=c': page({ keys: [], has_more: true }),
      '/user/api-keys?cursor=c&page=2': page({ keys: [{ id: 'k3' }], next_cursor: null }),
    });
    const list = await client.listAllKeys();
    expect(list.keys.map((k) => k.id)).toEqual(['k1', 'k2', 'k3']);
    expect(list.incomplete).toBeNull();
    expect(list.pages).toBe(5);
    expect(requests).toHaveLength(5);
  });

  it('ends at an empty page that names no next one, and says so of one that names it in a way svc cannot follow', async () => {
    const ended = pagedClient({ '/user/api-keys': page({ keys: [{ id: 'k1' }], next_cursor: 'x' }), '/user/api-keys?cursor=x': page({ keys: [], next_cursor: null }) });
    expect((await ended.client.listAllKeys()).incomplete).toBeNull();
    const token = pagedClient({ '/user/api-keys': page({ keys: [], next_page_token: 'abc' }) });
    expect((await token.client.listAllKeys()).incomplete).toMatch(/names a next page by `next_page_token`/);
  });

  it('stops a server whose empty pages loop on one cursor when the cursor comes back', async () => {
    const { client, requests } = pagedClient({
      '/user/api-keys': page({ keys: [{ id: 'k1' }], next_cursor: 'a' }),
      '/user/api-keys?cursor=a': page({ keys: [], next_cursor: 'a' }),
    });
    const error = await client.listAllKeys().catch((e) => e);
    expect(error).toBeInstanceOf(IncompleteListError);
    expect(error.message).toMatch(/its page 3 is one it sent before \(\/user\/api-keys\?cursor=a\)/);
    expect(requests).toHaveLength(2);
  });

  it('stops a server whose empty pages never end, each with a new cursor, at the page cap', async () => {
    const { client, requests } = pagedClient((path) => page({ keys: [], next_cursor: `c${(Number(/cursor=c(\d+)/.exec(path)?.[1] ?? 0)) + 1}` }));
    const error = await client.listAllKeys().catch((e) => e);
    expect(error).toBeInstanceOf(IncompleteListError);
    expect(error.message).toMatch(/it still had more after 10000 pages/);
    expect(requests).toHaveLength(10_000);
  });
});
