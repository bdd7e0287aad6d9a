// tier: in-process
import { describe, expect, it } from 'vitest';
import { requestPath } from '../../src/server/http.js';
import { Router } from '../../src/server/router.js';

describe('Router', () => {
  const router = new Router<string>()
    .add('/items', { GET: 'list', POST: 'create' })
    .add('/items/:id', { GET: 'one', DELETE: 'remove' })
    // Shadowed by the parameter route above: the first route to match answers, as it always did.
    .add('/items/special', { GET: 'special' })
    .add('/other/special', { PUT: 'put-special' })
    .add('/other/:id', { GET: 'other-one' });

  it('finds a literal pattern by method, with no parameters', () => {
    expect(router.match('GET', '/items')).toEqual({ kind: 'found', handler: 'list', params: {} });
    expect(router.match('POST', '/items')).toEqual({ kind: 'found', handler: 'create', params: {} });
  });

  it('answers 405 material for a literal path with another method, listing the allowed ones', () => {
    expect(router.match('DELETE', '/items')).toEqual({ kind: 'method-not-allowed', allow: 'GET, POST' });
  });

  it('binds parameters, one non-empty segment each, still encoded', () => {
    expect(router.match('GET', '/items/a%2Fb')).toEqual({ kind: 'found', handler: 'one', params: { id: 'a%2Fb' } });
    expect(router.match('GET', '/items/')).toEqual({ kind: 'not-found' });
    expect(router.match('GET', '/items/a/b')).toEqual({ kind: 'not-found' });
  });

  it('lets the earlier route win where a literal and a parameter pattern both match', () => {
    expect(router.match('GET', '/items/special')).toEqual({ kind: 'found', handler: 'one', params: { id: 'special' } });
    expect(router.match('PUT', '/other/special')).toEqual({ kind: 'found', handler: 'put-special', params: {} });
    expect(router.match('GET', '/other/special')).toEqual({ kind: 'method-not-allowed', allow: 'PUT' });
    expect(router.match('GET', '/other/x')).toEqual({ kind: 'found', handler: 'other-one', params: { id: 'x' } });
  });

  it('knows no path it was not given, nor one that differs by a trailing slash or case', () => {
    expect(router.match('GET', '/nothing')).toEqual({ kind: 'not-found' });
    expect(router.match('GET', '/items/x/')).toEqual({ kind: 'not-found' });
    expect(router.match('GET', '/Items')).toEqual({ kind: 'not-found' });
  });

  it('hands out parameters no caller can write into the next match', () => {
    const first = router.match('GET', '/items');
    expect(first.kind === 'found' && Object.isFrozen(first.params)).toBe(true);
  });
});

describe('requestPath', () => {
  it.each([
    ['/api/service/user/api-keys', '/api/service/user/api-keys'],
    ['/a/b?x=1#f', '/a/b'],
    ['/a/b#f?x', '/a/b'],
    ['/a?', '/a'],
    ['http://host:8080/a/b?x', '/a/b'],
    ['HTTPS://host', ''],
    ['*', '*'],
    ['', ''],
    [undefined, ''],
  ])('%s is %s', (url, path) => {
    expect(requestPath(url)).toBe(path);
  });
});
