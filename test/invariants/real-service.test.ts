// tier: in-process
/**
 * Issue 23, against a server svc did not write (test/helpers/spec-server.ts):
 * lists in pages of every common style and either order, other spellings
 * of a record's fields, creates committed late, connections dropped as they
 * are reused, 503s and 429s as services send them, error bodies with
 * details, and TLS spoken to a plain-http port. docs/contract.md §C3, §C4, §C6.
 */
import { describe, expect, it } from 'vitest';
import { records, useSpecServer, type SpecKey } from '../helpers/spec-server.js';
import { svc, tempConfigDir } from '../helpers/in-process.js';

const config = tempConfigDir();
const DAY = 86_400_000;
const spec = useSpecServer(config);
const { start } = spec;

/** `count` keys besides the bootstrap one, made oldest first: key-1 … key-N. Key 3 and every tenth after it up to key 63 have expired. */
function fill(count: number): SpecKey[] {
  return Array.from({ length: count }, (_, i) => spec.server.addKey(`key-${i + 1}`, i % 10 === 2 && i < 70 ? Date.now() - DAY : null));
}

const byName = (name: string) => [...spec.server.keys.values()].find((k) => k.name === name)!;
const listRequests = () => spec.server.seen.filter((r) => r === 'GET /api/service/user/api-keys').length;

describe.each([
  ['next_cursor', 'cursor'],
  ['has_more and ?page=', 'has-more'],
  ['a Link header', 'link'],
  ["JSON:API's links.next", 'links-next'],
] as const)('a list of 75 keys in pages of 20, the next named by %s', (_, style) => {
  describe.each(['newest-first', 'oldest-first'] as const)('listed %s', (order) => {
    it('is read whole by list, --json, --name, view, rotate, prune and completion', async () => {
      // Full records: prune leaves alone a key it cannot tell from the one in use, and hints tell it.
      const env = await start({ pages: { size: 20, style }, order, record: records.full });
      const made = fill(74);

      const tsv = await svc(['keys', 'list'], env);
      expect(tsv.exitCode, tsv.stderr).toBe(0);
      expect(tsv.stdout.split('\n')).toHaveLength(76);
      expect(tsv.stderr).toBe('');
      expect(JSON.parse((await svc(['keys', 'list', '--json'], env)).stdout).keys).toHaveLength(75);
      // Key 60 of 75 is on the fourth page either way round.
      const named = await svc(['keys', 'list', '--name', 'key-60', '--json'], env);
      expect(JSON.parse(named.stdout).keys.map((k: { id: string }) => k.id)).toEqual([made[59]!.id]);

      const view = await svc(['keys', 'view', made[59]!.id], env);
      expect(view.exitCode, view.stderr).toBe(0);
      expect(view.stdout).toContain('key-60');

      const rotated = await svc(['keys', 'rotate', '--yes', made[40]!.id], env);
      expect(rotated.exitCode, rotated.stderr).toBe(0);
      expect(spec.server.keys.has(made[40]!.id)).toBe(false);
      expect(rotated.stdout).toBe([...spec.server.keys.values()].at(-1)!.secret);

      const ids = await svc(['__complete', 'key-ids'], env);
      expect(ids.stdout.split('\n')).toHaveLength(75);

      const expired = made.filter((k) => k.expiresAt !== null).map((k) => k.id);
      expect(expired).toHaveLength(7);
      const prune = await svc(['keys', 'prune', '--expired', '--yes'], env);
      expect(prune.exitCode, prune.stderr).toBe(0);
      expect(expired.filter((id) => spec.server.keys.has(id))).toEqual([]);
      expect(spec.server.keys.size).toBe(68);
    });
  });
});

describe('a PATCH answered 204 to a real change', () => {
  it('disables a key on a late page and reports it done, exit 0', async () => {
    const env = await start({ pages: { size: 20, style: 'cursor' }, patchNoContent: true });
    const target = fill(74)[61]!;
    const result = await svc(['keys', 'disable', target.id], env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain(`✓ ${target.id} (key-62) is disabled.`);
    expect(result.stderr).not.toContain('already');
    expect(spec.server.keys.get(target.id)!.enabled).toBe(false);
  });
});

describe('pages svc cannot follow', () => {
  it.each([
    ['a next_page_token', 'token', /names a next page by `next_page_token`/],
    ['a total and no next page', 'total-only', /says it holds 75 keys, but its pages held 20/],
  ] as const)('%s: list prints what it read and exits 1 saying it may be incomplete, --json too; prune and the finder exit 1 saying so', async (_, style, why) => {
    const env = await start({ pages: { size: 20, style } });
    fill(74);
    const list = await svc(['keys', 'list'], env);
    expect(list.exitCode).toBe(1);
    expect(list.stdout.split('\n')).toHaveLength(21);
    expect(list.stderr).toContain('The key list may be incomplete: it');
    expect(list.stderr).toMatch(why);
    expect(list.stderr).toContain('only the keys svc could read were listed');

    const json = await svc(['keys', 'list', '--json'], env);
    expect(json.exitCode).toBe(1);
    const document = JSON.parse(json.stdout);
    expect(document.keys).toHaveLength(20);
    expect(document.incomplete).toMatch(why);
    expect(json.stderr).toContain('the document holds only the keys svc could read');

    const manager = await svc([], env, { tty: true, columns: 120 });
    expect(manager.exitCode, manager.stderr).toBe(0);
    expect(manager.stderr).toMatch(/The key list may be incomplete: it/);

    const dry = await svc(['keys', 'prune', '--expired', '--dry-run', '--json'], env);
    expect(dry.exitCode).toBe(1);
    expect(JSON.parse(dry.stdout).incomplete).toMatch(why);

    const prune = await svc(['keys', 'prune', '--expired', '--yes'], env);
    expect(prune.exitCode).toBe(1);
    expect(prune.stderr).toContain('Not every key could be read, so keys that match may remain');

    spec.server.rules.push({ method: 'POST', times: 1, then: 'drop', work: false });
    const create = await svc(['keys', 'create', 'lost'], env);
    expect(create.exitCode).toBe(1);
    expect(create.stderr).toContain('The list may lack keys: it');
  });

  it('has_more from a server that ignores ?page=: an error after the second page, not ten thousand', async () => {
    const env = await start({ pages: { size: 20, style: 'has-more-ignored' } });
    fill(74);
    const result = await svc(['keys', 'list'], env);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('holds only keys of earlier pages, as if it ignored the page asked for');
    expect(listRequests()).toBe(2);
  });
});

describe('a list with an empty page before each page of keys, as AIP-158 allows', () => {
  it('is read whole by list (text and --json), audit and prune', async () => {
    const env = await start({ pages: { size: 3, style: 'empty-pages' }, record: records.full });
    // Oldest, so on the last page: newest first, the pages are key-6..4, key-3..1, then soon and bootstrap.
    const soon = spec.server.addKey('soon', Date.now() + 3 * DAY);
    const made = fill(6);

    const tsv = await svc(['keys', 'list'], env);
    expect(tsv.exitCode, tsv.stderr).toBe(0);
    expect(tsv.stdout.split('\n')).toHaveLength(9);
    expect(tsv.stderr).toBe('');
    const json = await svc(['keys', 'list', '--json'], env);
    expect(json.exitCode, json.stderr).toBe(0);
    const document = JSON.parse(json.stdout);
    expect(document.keys).toHaveLength(8);
    expect(document).not.toHaveProperty('incomplete');
    expect(document).not.toHaveProperty('next_cursor');

    const audit = await svc(['keys', 'audit', '--expiring-within', '7d'], env);
    expect(audit.exitCode, audit.stderr).toBe(1);
    expect(audit.stdout).toContain(soon.id);
    expect(audit.stderr).not.toContain('every key passes');

    const prune = await svc(['keys', 'prune', '--expired', '--yes'], env);
    expect(prune.exitCode, prune.stderr).toBe(0);
    expect(prune.stderr).toContain(`Revoked ${made[2]!.id}`);
    expect(spec.server.keys.has(made[2]!.id)).toBe(false);
    expect(spec.server.keys.size).toBe(7);
  });
});

describe('a list answer without its list', () => {
  it.each(['{}', '{"keys":"x"}', '{"results":[]}', '[]'])('%s is no empty list: list exits 1 saying so, audit cannot pass (exit 6)', async (body) => {
    const env = await start();
    fill(3);
    spec.server.rules.push({ method: 'GET', path: /^\/user\/api-keys$/, times: 2, then: { status: 200, body } });
    const list = await svc(['keys', 'list'], env);
    expect(list.exitCode).toBe(1);
    expect(list.stderr).toContain('holds no "keys" list');
    const audit = await svc(['keys', 'audit', '--max-age', '1d'], env);
    expect(audit.exitCode).toBe(6);
    expect(audit.stderr).not.toContain('every key passes');
  });
});

describe('a list that moves while svc reads it', () => {
  it('a key made between two pages of an offset list is listed once, and the list is not called complete', async () => {
    let made = false;
    const env = await start({
      pages: { size: 20, style: 'has-more' },
      onRequest: (method, _path, query) => {
        // Newest first: a key made before page 2 pushes page 1's last key onto page 2.
        if (method === 'GET' && query.get('page') === '2' && !made) {
          made = true;
          spec.server.addKey('made-meanwhile');
        }
      },
    });
    fill(44);
    const list = await svc(['keys', 'list', '--json'], env);
    expect(list.exitCode, list.stderr).toBe(1);
    expect(JSON.parse(list.stdout).incomplete).toMatch(/^a key came on two pages/);
    const ids: string[] = JSON.parse(list.stdout).keys.map((k: { id: string }) => k.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(45);
    expect(list.stderr).toContain('The key list may be incomplete: a key came on two pages, so the list changed while svc read it');

    made = false;
    const prune = await svc(['keys', 'prune', '--expired', '--yes'], env);
    expect(prune.exitCode).toBe(1);
    expect(prune.stderr).toContain('Not every key could be read');
  });
});

describe('every POST', () => {
  it('carries an Idempotency-Key, a new one for each create', async () => {
    const env = await start();
    for (const name of ['a', 'b']) expect((await svc(['keys', 'create', name], env)).exitCode).toBe(0);
    const keys = spec.server.seen.flatMap((request, i) => (request.startsWith('POST') ? [spec.server.seenHeaders[i]!['idempotency-key']] : []));
    expect(keys).toHaveLength(2);
    for (const key of keys) expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(keys[0]).not.toBe(keys[1]);
    expect(spec.server.seenHeaders.filter((h, i) => !spec.server.seen[i]!.startsWith('POST') && h['idempotency-key'] !== undefined)).toEqual([]);
  });

  it('goes out on a fresh connection, so one the server drops as it is reused never takes a create down', async () => {
    const env = await start({ dropReusedConnections: true });
    const old = spec.server.addKey('app');
    const limited = { status: 429, body: '{"error":"slow down","code":"RATE_LIMITED"}', headers: () => ({ 'retry-after': '2' }) };
    // A real pause, however short, where the fake one resolves at once: undici checks an idle connection on the
    // next turn of the event loop, and only a connection that passed that check is reused (client-h1.js).
    const pause = { deps: { sleep: () => new Promise<void>((resolve) => setTimeout(resolve, 20)) } };
    for (const args of [['keys', 'create', 'after-a-wait'], ['keys', 'rotate', '--yes', old.id]]) {
      spec.server.rules.push({ method: 'POST', times: 1, work: false, then: limited });
      const result = await svc(args, env, pause);
      expect(result.exitCode, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      expect(result.stderr).not.toContain('may have reached the server');
    }
    expect(spec.server.seen.filter((r) => r.startsWith('POST'))).toHaveLength(4);
    expect(byName('after-a-wait')).toBeDefined();
    expect(spec.server.keys.has(old.id)).toBe(false);
  });
});

describe('503 and 429 as services send them', () => {
  const busy = (retryAfter: string) => ({
    method: 'GET',
    times: 1,
    work: false,
    then: { status: 503, body: '{"error":"Service busy"}', headers: () => ({ 'retry-after': retryAfter }) },
  });

  it('a 503 with Retry-After: 5 is retried after 5 s, not sooner', async () => {
    const env = await start();
    spec.server.rules.push(busy('5'));
    const result = await svc(['keys', 'list'], env);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.slept).toEqual([5_000]);
  });

  it('a 503 asking for more than --max-wait leaves: one request, no wait', async () => {
    const env = await start();
    spec.server.rules.push(busy('400'));
    const result = await svc(['keys', 'list', '--max-wait', '10'], env);
    expect(result.exitCode).toBe(1);
    expect(result.slept).toEqual([]);
    expect(listRequests()).toBe(1);
  });

  it('a 429 without code waits Retry-After like a rate limit; one with another code does not', async () => {
    const env = await start();
    spec.server.rules.push({ method: 'GET', times: 1, work: false, then: { status: 429, body: '{"error":"Too many requests"}', headers: () => ({ 'retry-after': '3' }) } });
    const waited = await svc(['keys', 'list'], env);
    expect(waited.exitCode, waited.stderr).toBe(0);
    expect(waited.slept).toEqual([3_500]);
    spec.server.rules.push({ method: 'GET', times: 1, work: false, then: { status: 429, body: '{"error":"Monthly quota used","code":"QUOTA"}', headers: () => ({ 'retry-after': '3' }) } });
    const refused = await svc(['keys', 'list'], env);
    expect(refused.exitCode).toBe(1);
    expect(refused.slept).toEqual([]);
  });

  it('--max-wait 10 counts the jitter: two waits of 5 s and 500 ms would pass it, so there is one', async () => {
    const env = await start();
    for (let i = 0; i < 3; i++) {
      spec.server.rules.push({ method: 'GET', times: 1, work: false, then: { status: 429, body: '{"error":"slow down","code":"RATE_LIMITED"}', headers: () => ({ 'retry-after': '5' }) } });
    }
    const result = await svc(['keys', 'list', '--max-wait', '10'], env);
    expect(result.exitCode).toBe(5);
    expect(result.slept).toEqual([5_500]);
    expect(result.slept.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(10_000);
  });
});

describe('error answers that say more', () => {
  it.each([400, 422])('a %i about the name: the details shown, exit 2', async (status) => {
    const env = await start();
    const body = JSON.stringify({ error: 'Validation failed', code: 'VALIDATION', details: ['name must be at most 64 characters', { field: 'name', message: 'no \u001b[31mescapes\u001b[0m' }] });
    spec.server.rules.push({ method: 'POST', times: 1, work: false, then: { status, body } });
    const result = await svc(['keys', 'create', 'x'.repeat(80)], env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`failed (${status} VALIDATION): Validation failed`);
    expect(result.stderr).toContain('  - name must be at most 64 characters');
    expect(result.stderr).toContain('  - name: no \\x1b[31mescapes\\x1b[0m');
  });

  it('at most five details, then how many more', async () => {
    const env = await start();
    const details = Array.from({ length: 9 }, (_, i) => `problem ${i + 1}`);
    spec.server.rules.push({ method: 'POST', times: 1, work: false, then: { status: 400, body: JSON.stringify({ error: 'Invalid', details }) } });
    const result = await svc(['keys', 'create', 'x'], env);
    expect(result.stderr).toContain('  - problem 5\n  (and 4 more)');
    expect(result.stderr).not.toContain('problem 6');
  });

  it('a 500 with an HTML page is a server error, not a wrong address', async () => {
    const env = await start();
    const page = { status: 500, body: '<html><body><h1>500 Internal Server Error</h1></body></html>', headers: () => ({ 'content-type': 'text/html' }) };
    for (let i = 0; i < 5; i++) spec.server.rules.push({ method: 'GET', times: 1, work: false, then: page });
    const result = await svc(['keys', 'list'], env);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('failed with a server error (500), answered with text/html');
    expect(result.stderr).not.toContain("the service's address?");
  });
});

describe('filters and prune on records that lack the field', () => {
  it('say how many keys they could not judge', async () => {
    const env = await start({ record: records.bare });
    fill(4);
    const expiring = await svc(['keys', 'list', '--expiring', '7d'], env);
    expect(expiring.exitCode).toBe(0);
    expect(expiring.stderr).toContain('5 keys show no expiry time svc can read: --expiring could not judge them, and left them out.');
    const prune = await svc(['keys', 'prune', '--unused-for', '1d', '--disabled', '--dry-run'], env);
    expect(prune.stderr).toContain('5 keys show no on/off state svc can read: --disabled could not judge them, and left them alone.');
    expect(prune.stderr).toContain('5 keys show no last use svc can read: --unused-for could not judge them, and left them alone.');
    expect(prune.stderr).toContain('No key matches');
  });
});

describe('TLS spoken to a plain-http port', () => {
  it('says the server speaks plain http and where to point svc, tries once, and never says a create may have landed', async () => {
    const env = await start();
    const https = `https://127.0.0.1:${spec.server.port}`;
    for (const args of [['keys', 'list'], ['keys', 'create', 'ci']]) {
      const result = await svc([...args, '--base-url', https], env);
      expect(result.exitCode, args.join(' ')).toBe(1);
      expect(result.stderr).toContain(`the server speaks plain http, not TLS: try http://127.0.0.1:${spec.server.port} as the base URL`);
      expect(result.stderr).toContain('Not retried');
      expect(result.stderr).not.toMatch(/may have reached|wrong version number|ssl3_get_record/);
      expect(result.slept).toEqual([]);
    }
    // status says it on its Server line, and nothing after the block: it never retries anyway.
    const status = await svc(['status', '--base-url', https], env);
    expect(status.exitCode).toBe(1);
    expect(status.stdout).toContain(`✗ no answer: the server speaks plain http, not TLS: try http://127.0.0.1:${spec.server.port} as the base URL`);
    expect(status.stderr).toBe('');
    expect(spec.server.seen).toEqual([]);
  });
});
