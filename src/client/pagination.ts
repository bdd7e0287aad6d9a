/**
 * Where the next page of a key list is, in the ways services say it
 * (docs/contract.md §C6): a `Link: <…>; rel="next"` header, a cursor in the
 * body (`next_cursor`, `nextCursor`, or `next` as a cursor or an address),
 * an address in `links.next`, `_links.next.href`, `next_page_url` or
 * `nextPageUrl`, or `has_more` with page numbers; and the signs of more that
 * svc cannot follow. Pure: the list reader (ApiClient.listAllKeys) does the
 * requests.
 */
import { API_PREFIX } from '../contract/paths.js';
import { isObject } from './key-view.js';

/** Fields of a list answer that describe its pages, not the keys: left out of the document --json prints. */
export const PAGE_FIELDS = [
  'next_cursor',
  'nextCursor',
  'next',
  'has_more',
  'hasMore',
  'page',
  'per_page',
  'perPage',
  'total',
  'total_count',
  'totalCount',
  'cursor',
  'links',
  '_links',
  'next_page_url',
  'nextPageUrl',
  'next_page_token',
  'nextPageToken',
] as const;

/** Names of a continuation token whose request parameter the spec and the services svc knows do not agree on: seen, never guessed at. */
const UNFOLLOWED_TOKENS = ['next_page_token', 'nextPageToken', 'continuation_token', 'continuationToken', 'next_token', 'nextToken'] as const;

export type NextPage = { path: string } | { foreign: string } | null;

/**
 * The path (below the API prefix, query included) of the page after the
 * one `path` answered; `foreign` when it is at an address other than the
 * base URL's, where svc will not send the key.
 */
export function nextPage(path: string, body: unknown, linkHeader: string | null, baseUrl: string): NextPage {
  const link = linkHeader === null ? null : nextLink(linkHeader);
  if (link !== null) return fromAddress(link, path, baseUrl);
  if (!isObject(body)) return null;
  const cursor = firstText(cursorText(body.next_cursor), cursorText(body.nextCursor));
  if (cursor !== null) return { path: withQuery(path, 'cursor', cursor) };
  const next = firstText(cursorText(body.next));
  if (next !== null) return /^(https?:)?\/\//i.test(next) || next.startsWith('/') ? fromAddress(next, path, baseUrl) : { path: withQuery(path, 'cursor', next) };
  const links = isObject(body.links) ? body.links : null;
  const hal = isObject(body._links) && isObject(body._links.next) ? body._links.next : null;
  const address = firstText(links?.next, isObject(links?.next) ? links.next.href : null, hal?.href, body.next_page_url, body.nextPageUrl);
  if (address !== null) return fromAddress(address, path, baseUrl);
  if (body.has_more === true || body.hasMore === true) {
    const current = typeof body.page === 'number' && Number.isSafeInteger(body.page) ? body.page : pageOf(path);
    return { path: withQuery(path, 'page', String(current + 1)) };
  }
  return null;
}

/**
 * A cursor as services send it: text, or a page number or offset
 * (`"nextCursor": 2`), sent back as text. A 0 ends the list, as in Redis's
 * SCAN: no next page is page or offset 0.
 */
function cursorText(value: unknown): unknown {
  if (value === 0) return null;
  return typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
}

/** A cursor field that says there is more in a form svc cannot send back (an object, a list, a fraction). */
const CURSOR_FIELDS = ['next_cursor', 'nextCursor', 'next'] as const;
function unusableCursor(value: unknown): boolean {
  const text = cursorText(value);
  return text !== undefined && text !== null && text !== false && text !== '' && typeof text !== 'string';
}

function firstText(...values: unknown[]): string | null {
  for (const value of values) if (typeof value === 'string' && value !== '') return value;
  return null;
}

/** The target of the first `rel="next"` in a Link header (RFC 8288), or null. */
function nextLink(header: string): string | null {
  for (const part of header.split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]*)>(.*)$/.exec(part);
    if (match && /;\s*rel\s*=\s*"?([^";]*\s)?next(\s[^";]*)?"?\s*(;|$)/i.test(match[2]!)) return match[1]!;
  }
  return null;
}

/** An address for the next page, resolved against the page just read; only one below the base URL's API prefix is followed. */
function fromAddress(address: string, path: string, baseUrl: string): NextPage {
  const root = `${baseUrl.replace(/\/+$/, '')}${API_PREFIX}`;
  let url: URL;
  try {
    url = new URL(address, `${root}${path}`);
  } catch {
    return { foreign: address };
  }
  const rootUrl = new URL(root);
  if (url.origin !== rootUrl.origin || !url.pathname.startsWith(`${rootUrl.pathname}/`)) return { foreign: url.href };
  return { path: url.pathname.slice(rootUrl.pathname.length) + url.search };
}

function withQuery(path: string, name: string, value: string): string {
  const [bare, query = ''] = path.split('?', 2) as [string, string?];
  const params = new URLSearchParams(query);
  params.set(name, value);
  return `${bare}?${params}`;
}

function pageOf(path: string): number {
  const page = Number(new URLSearchParams(path.split('?', 2)[1] ?? '').get('page'));
  return Number.isSafeInteger(page) && page > 0 ? page : 1;
}

/**
 * A sign, in the last page svc read, that the list goes on where svc
 * cannot follow it: a continuation token under a name whose request
 * parameter is anyone's guess, or a total larger than the keys read.
 * Null when nothing says so.
 */
export function unfollowedMore(body: unknown, keysRead: number): string | null {
  if (!isObject(body)) return null;
  const token = UNFOLLOWED_TOKENS.find((name) => firstText(body[name]) !== null);
  if (token !== undefined) return `its last page names a next page by \`${token}\`, which svc does not know how to send back`;
  const odd = CURSOR_FIELDS.find((name) => unusableCursor(body[name]));
  if (odd !== undefined) return `its last page's \`${odd}\` is ${Array.isArray(body[odd]) ? 'a list' : typeof body[odd]}, not a cursor svc can send back`;
  const total = [body.total, body.total_count, body.totalCount].find((n): n is number => typeof n === 'number' && Number.isSafeInteger(n));
  if (total !== undefined && total > keysRead) return `it says it holds ${total} keys, but its pages held ${keysRead} and named no next page`;
  return null;
}
