// tier: in-process
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { HttpRequest, Transport } from '../../src/client/transport.js';
import { validateKeyName } from '../../src/cli/domain/keys.js';
import { BASE62 } from '../../src/contract/key-format.js';
import { svc, tempConfigDir } from '../helpers/in-process.js';
import { scriptedPrompter } from '../helpers/prompter.js';

// A key pasted where an id, a name or an `svc api` path goes is refused
// before any request, and only its hint is ever shown: sent, it would sit in
// URLs, bodies and logs, and messages would print it back.

const randomBody = (length: number) => [...randomBytes(length)].map((b) => BASE62[b % 62]).join('');
const SECRET = `sk_abcd${randomBody(56)}wxyz`;
const IN_USE = `sk_${randomBody(64)}`;
const config = tempConfigDir();
afterAll(() => config.remove());

function noRequests() {
  const sent: HttpRequest[] = [];
  const transport: Transport = async (req) => {
    sent.push(req);
    return { status: 404, headers: { 'content-type': 'application/json' }, text: '{"error":"Not found"}' };
  };
  return { sent, transport };
}

/** Any 8 characters in a row of the key's body: its hint shows 4 and 4, apart. */
function leaked(text: string): string | null {
  const body = SECRET.slice(3);
  for (let at = 0; at + 8 <= body.length; at++) if (text.includes(body.slice(at, at + 8))) return body.slice(at, at + 8);
  return null;
}

async function refused(args: string[], what: string, options: { tty?: boolean } = {}) {
  const { sent, transport } = noRequests();
  const env = { SVC_BASE_URL: 'http://127.0.0.1:9', SVC_API_KEY: IN_USE, SVC_CONFIG_DIR: config.dir };
  const result = await svc(args, env, { ...options, deps: { transport, prompter: scriptedPrompter([]) } });
  expect(result.exitCode, result.stderr).toBe(2);
  expect(result.stderr).toContain(`sk_abcd…wxyz: that is an API key, not ${what}`);
  expect(sent.map((r) => `${r.method} ${r.url}`)).toEqual([]);
  expect(leaked(result.stdout + result.stderr)).toBeNull();
}

const spaced = ` \t${SECRET}\n `;

describe('a key given as a key id', () => {
  it.each([
    ['keys view', ['keys', 'view', SECRET]],
    ['keys view, with white space around it', ['keys', 'view', spaced]],
    ['keys view --json', ['keys', 'view', SECRET, '--json']],
    ['keys revoke --yes', ['keys', 'revoke', SECRET, '--yes']],
    ['keys revoke, second of two ids', ['keys', 'revoke', 'key_1', spaced, '--yes', '--if-exists']],
    ['keys enable', ['keys', 'enable', SECRET]],
    ['keys disable', ['keys', 'disable', spaced]],
    ['keys rotate', ['keys', 'rotate', SECRET, '--yes']],
    ['keys rotate --disable-old', ['keys', 'rotate', spaced, '--disable-old']],
    ['keys rotate percent-encoded', ['keys', 'rotate', SECRET.replace('_', '%5F')]],
  ])('is refused by %s before any request', async (_, args) => {
    await refused(args, 'a key id');
  });

  it('is refused on a terminal too, before the confirmation', async () => {
    await refused(['keys', 'revoke', SECRET], 'a key id', { tty: true });
  });
});

describe('a key given as a name', () => {
  it.each([
    ['alone', SECRET],
    ['with white space around it', spaced],
    ['inside a longer name', `ci ${SECRET}`],
  ])('is refused by keys create when %s', async (_, name) => {
    await refused(['keys', 'create', name], 'a name');
    await refused(['keys', 'create', name, '--expires-in', '30d', '--json'], 'a name');
  });

  it('is refused by the name prompt of keys create and of the manager, naming only the hint', () => {
    const verdict = validateKeyName(spaced);
    expect(verdict).toContain('sk_abcd…wxyz: that is an API key, not a name');
    expect(leaked(String(verdict))).toBeNull();
    expect(validateKeyName('laptop')).toBe(true);
    expect(validateKeyName('  ')).toBe('A name is required.');
  });
});

describe('a key in an svc api path', () => {
  it.each([
    ['as a segment', `/user/api-keys/${SECRET}`],
    ['with the prefix and white space', `/api/service/user/api-keys/${spaced}`],
    ['percent-encoded', `/user/api-keys/${SECRET.replace('_', '%5F').replace('a', '%61')}`],
    ['double-encoded', `/user/api-keys/${SECRET.replace('s', '%2573')}`],
    ['in the query', `/user/api-keys?name=${SECRET}`],
  ])('is refused %s before any request', async (_, path) => {
    await refused(['api', path], 'a path');
    await refused(['api', '-X', 'DELETE', path, '-i'], 'a path');
  });

  it('leaves paths that hold no key alone', async () => {
    const { sent, transport } = noRequests();
    const env = { SVC_BASE_URL: 'http://127.0.0.1:9', SVC_API_KEY: IN_USE, SVC_CONFIG_DIR: config.dir };
    const result = await svc(['api', `/user/api-keys/task_${randomBody(64)}`], env, { deps: { transport } });
    expect(result.exitCode).toBe(4);
    expect(sent).toHaveLength(1);
  });
});

describe('a key in an svc api body', () => {
  it.each([
    ['as a -f field', ['-f', `name=${SECRET}`]],
    ['inside a -F field', ['-F', `name=ci ${SECRET}`]],
    ['in a field\'s name', ['-f', `${SECRET}=x`]],
  ])('is refused %s before any request', async (_, fields) => {
    await refused(['api', '/user/api-keys', ...fields], 'something to send in a request body');
  });

  it('is refused from --input, nested anywhere in the document', async () => {
    const { sent, transport } = noRequests();
    const env = { SVC_BASE_URL: 'http://127.0.0.1:9', SVC_API_KEY: IN_USE, SVC_CONFIG_DIR: config.dir };
    const body = JSON.stringify({ name: 'ci', labels: [{ note: `rotated from ${SECRET}` }] });
    const result = await svc(['api', '/user/api-keys', '--input', '-'], env, { input: body, deps: { transport } });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('sk_abcd…wxyz: that is an API key, not something to send in a request body');
    expect(sent).toEqual([]);
    expect(leaked(result.stdout + result.stderr)).toBeNull();
  });
});

describe('a key in what a server answers, but for a create', () => {
  /** A server whose key list, key record and errors carry SECRET in a name and a message. */
  function echoingServer(): Transport {
    const record = { id: 'key_1', name: `pasted ${SECRET}`, hint: 'sk_abcd…wxyz', enabled: true, createdAt: '2026-01-01T00:00:00Z', note: [SECRET, `glued${SECRET}`] };
    return async (req) => {
      const json = (status: number, body: unknown) => ({ status, headers: { 'content-type': 'application/json' }, text: JSON.stringify(body) });
      if (req.method === 'GET' && req.url.endsWith('/user/api-keys')) return json(200, { keys: [record] });
      if (req.method === 'GET' && req.url.endsWith('/user/api-keys/key_1')) return json(200, record);
      if (req.method === 'POST') return json(201, { ...record, id: 'key_2', name: 'new', secret: SECRET });
      return json(400, { error: `Bad request for ${SECRET}`, code: 'INVALID_REQUEST' });
    };
  }

  it.each([
    ['keys list', ['keys', 'list']],
    ['keys list --json', ['keys', 'list', '--json']],
    ['keys view', ['keys', 'view', 'key_1']],
    ['keys view --json', ['keys', 'view', 'key_1', '--json']],
    ['svc api GET', ['api', '/user/api-keys']],
    ['an error answer', ['api', '-X', 'PATCH', '/user/api-keys/key_1', '-F', 'enabled=false']],
  ])('%s shows it by its hint', async (_, args) => {
    const env = { SVC_BASE_URL: 'http://127.0.0.1:9', SVC_API_KEY: IN_USE, SVC_CONFIG_DIR: config.dir };
    const result = await svc(args, env, { deps: { transport: echoingServer() } });
    expect(leaked(result.stdout + result.stderr), result.stdout + result.stderr).toBeNull();
    expect(result.stdout + result.stderr).toContain('sk_abcd…wxyz');
  });

  it('a create\'s answer keeps its secret: it is the one time it is shown', async () => {
    const env = { SVC_BASE_URL: 'http://127.0.0.1:9', SVC_API_KEY: IN_USE, SVC_CONFIG_DIR: config.dir };
    const result = await svc(['keys', 'create', 'new'], env, { deps: { transport: echoingServer() } });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe(SECRET);
  });
});
