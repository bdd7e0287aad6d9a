// tier: in-process
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { HttpRequest, Transport } from '../../src/client/transport.js';
import { validateKeyName } from '../../src/cli/keys.js';
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
