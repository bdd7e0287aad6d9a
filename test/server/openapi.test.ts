// tier: in-process
/**
 * The reference server's real answers, checked against docs/openapi.yaml:
 * every documented path, method and status is exercised, and each answer's
 * status must be documented for its operation, its body must match the
 * documented schema and its documented headers must be there with valid
 * values. A change to either side that the other does not follow fails here.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type Answer, type TestServer } from './helpers.js';

const DOCUMENT = resolve(import.meta.dirname, '../../docs/openapi.yaml');
const DOC_ID = 'https://svc.invalid/openapi.yaml';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
// ajv-formats is CommonJS with a default export; its types and its runtime shape disagree under NodeNext.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void;

type Json = any;
let doc: Json;
let ajv: Ajv2020;
let t: TestServer;
/** `METHOD /template status` of every answer checked. */
const seen = new Set<string>();

/** The object a JSON pointer names in the document, following a `$ref` where it stands. */
function at(pointer: string): Json {
  let node: Json = doc;
  for (const raw of pointer.split('/').slice(1)) node = node[raw.replaceAll('~1', '/').replaceAll('~0', '~')];
  return node;
}
const escape = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');
function deref(pointer: string): string {
  const ref = at(pointer)?.$ref as string | undefined;
  return ref ? ref.slice(1) : pointer;
}

const validators = new Map<string, ValidateFunction>();
function validatorAt(pointer: string): ValidateFunction {
  let validate = validators.get(pointer);
  if (!validate) {
    validate = ajv.getSchema(`${DOC_ID}#${pointer}`)!;
    if (!validate) throw new Error(`no schema at ${pointer}`);
    validators.set(pointer, validate);
  }
  return validate;
}

function templateOf(path: string): string {
  const bare = path.split('?', 1)[0]!;
  if (bare.startsWith('/user/api-keys/')) return '/user/api-keys/{id}';
  return bare;
}

/** Checks one answer against the document's response for its operation and status. */
function conforms(method: string, path: string, answer: Answer, responsePointer?: string): void {
  const template = templateOf(path);
  const label = `${method} ${template} ${answer.status}`;
  let pointer = responsePointer;
  if (!pointer) {
    const operation = `/paths/${escape(template)}/${method.toLowerCase()}`;
    expect(at(operation), `docs/openapi.yaml has no ${method} ${template}`).toBeDefined();
    pointer = `${operation}/responses/${answer.status}`;
    expect(at(pointer), `docs/openapi.yaml does not document ${label}: ${answer.text}`).toBeDefined();
    seen.add(label);
  }
  pointer = deref(pointer);
  const response = at(pointer);

  for (const [name, header] of Object.entries<Json>(response.headers ?? {})) {
    const headerPointer = deref(`${pointer}/headers/${escape(name)}`);
    const spec = at(headerPointer);
    const value = answer.headers[name.toLowerCase()];
    if (spec.required) expect(value, `${label}: header ${name}`).toBeDefined();
    if (value === undefined) continue;
    const typed = spec.schema.type === 'integer' && /^-?\d+$/.test(String(value)) ? Number(value) : value;
    const validate = validatorAt(`${headerPointer}/schema`);
    expect(validate(typed) ? [] : validate.errors, `${label}: header ${name}: ${String(value)}`).toEqual([]);
    void header;
  }

  const media = response.content?.['application/json'];
  if (!media || method === 'HEAD') {
    expect(answer.text, `${label} has no body`).toBe('');
    return;
  }
  expect(answer.headers['content-type'], label).toBe('application/json; charset=utf-8');
  const validate = validatorAt(`${pointer}/content/application~1json/schema`);
  expect(validate(answer.json) ? [] : validate.errors, `${label}: ${answer.text}`).toEqual([]);
}

beforeAll(async () => {
  doc = await SwaggerParser.parse(DOCUMENT);
  ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats(ajv);
  // The document's other top-level fields are not JSON Schema keywords; schemas are reached by pointer.
  for (const keyword of ['openapi', 'info', 'servers', 'security', 'tags', 'paths', 'components']) ajv.addKeyword(keyword);
  ajv.addSchema({ ...doc, $id: DOC_ID });
  t = await startTestServer({ plan: 'pro' });
});
afterAll(() => t?.close());

const BIG = JSON.stringify({ name: 'x'.repeat(70_000) });

describe('docs/openapi.yaml against the reference server', () => {
  it('documents every success answer, with its body and headers', async () => {
    const list = await t.api('GET', '/user/api-keys');
    conforms('GET', '/user/api-keys', list);
    expect(list.json.keys.length).toBeGreaterThan(0);
    await t.api('POST', '/user/api-keys', { body: { name: 'a second page' } });
    const first = await t.api('GET', '/user/api-keys?limit=1');
    conforms('GET', '/user/api-keys?limit=1', first);
    expect(first.json.nextCursor).toEqual(expect.any(String));
    const second = await t.api('GET', `/user/api-keys?limit=1&cursor=${encodeURIComponent(first.json.nextCursor)}`);
    conforms('GET', '/user/api-keys', second);

    const created = await t.api('POST', '/user/api-keys', { body: { name: 'openapi', expiresAt: '2999-01-01T00:00:00+02:00' } });
    conforms('POST', '/user/api-keys', created);
    const id = created.json.id as string;
    conforms('POST', '/user/api-keys', await t.api('POST', '/user/api-keys', { body: { name: 'no expiry', expiresAt: null } }));

    conforms('GET', `/user/api-keys/${id}`, await t.api('GET', `/user/api-keys/${id}`));
    conforms('PATCH', `/user/api-keys/${id}`, await t.api('PATCH', `/user/api-keys/${id}`, { body: { enabled: false } }));
    const already = await t.api('PATCH', `/user/api-keys/${id}`, { body: { enabled: false } });
    expect(already.status).toBe(204);
    conforms('PATCH', `/user/api-keys/${id}`, already);
    conforms('DELETE', `/user/api-keys/${id}`, await t.api('DELETE', `/user/api-keys/${id}`));
    conforms('GET', '/workspace', await t.api('GET', '/workspace'));

    // An expired key and a used one: the other shapes of a record.
    const soon = await t.api('POST', '/user/api-keys', { body: { name: 'soon', expiresAt: new Date(Date.now() + 2_000).toISOString() } });
    await t.api('GET', '/workspace', { key: soon.json.secret });
    await t.advance(5);
    const records = await t.api('GET', '/user/api-keys');
    conforms('GET', '/user/api-keys', records);
    expect(new Set(records.json.keys.map((k: { status: string }) => k.status))).toEqual(new Set(['enabled', 'expired']));
    expect(records.json.keys.some((k: { lastUsedAt: string | null }) => k.lastUsedAt !== null)).toBe(true);
  });

  it('documents every client error of the key operations', async () => {
    const id = (await t.api('POST', '/user/api-keys', { body: { name: 'target' } })).json.id as string;
    const cases: [string, string, Parameters<TestServer['api']>[2], number][] = [
      ['GET', '/user/api-keys?limit=0', {}, 400],
      ['GET', '/user/api-keys?cursor=not-given', {}, 400],
      ['POST', '/user/api-keys', { body: {} }, 400],
      ['POST', '/user/api-keys', { raw: '{"name":', headers: { 'content-type': 'application/json' } }, 400],
      ['POST', '/user/api-keys', { body: { name: 'x', expiresAt: '2000-01-01T00:00:00Z' } }, 400],
      ['POST', '/user/api-keys', { raw: BIG, headers: { 'content-type': 'application/json' } }, 413],
      ['PATCH', `/user/api-keys/${id}`, { body: { enabled: 'yes' } }, 400],
      ['PATCH', '/user/api-keys/key_unknown', { body: { extra: true } }, 400],
      ['PATCH', `/user/api-keys/${id}`, { raw: BIG, headers: { 'content-type': 'application/json' } }, 413],
      ['PATCH', '/user/api-keys/key_unknown', { body: { enabled: true } }, 404],
      ['GET', '/user/api-keys/key_unknown', {}, 404],
      ['GET', '/user/api-keys/%zz', {}, 404],
      ['DELETE', '/user/api-keys/key_unknown', {}, 404],
    ];
    for (const [method, path, options, status] of cases) {
      const answer = await t.api(method, path, options);
      expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(status);
      conforms(method, path, answer);
    }
  });

  it('documents 405 with Allow for every method a path does not offer, HEAD and OPTIONS included', async () => {
    for (const template of Object.keys(doc.paths)) {
      const path = template.replace('{id}', 'key_unknown');
      for (const method of METHODS) {
        const operation = doc.paths[template][method];
        if (!operation || operation.responses['405'] === undefined) continue;
        const answer = await t.api(method.toUpperCase(), path);
        expect(answer.status, `${method} ${path}`).toBe(405);
        conforms(method.toUpperCase(), path, answer);
      }
    }
  });

  it('documents the 401 of every operation', async () => {
    for (const template of Object.keys(doc.paths)) {
      const path = template.replace('{id}', 'key_unknown');
      for (const method of METHODS) {
        if (!doc.paths[template][method]) continue;
        const answer = await t.api(method.toUpperCase(), path, { key: null });
        expect(answer.status, `${method} ${path}`).toBe(401);
        conforms(method.toUpperCase(), path, answer);
      }
    }
  });

  it('documents the 429 of every operation', async () => {
    const free = (await t.admin('POST', '/users', { name: 'limited', plan: 'free' })).json.apiKey.secret as string;
    await t.startOfNextWindow();
    for (let i = 0; i < 30; i++) expect((await t.api('GET', '/workspace', { key: free })).status).toBe(200);
    for (const template of Object.keys(doc.paths)) {
      const path = template.replace('{id}', 'key_unknown');
      for (const method of METHODS) {
        if (!doc.paths[template][method]) continue;
        const answer = await t.api(method.toUpperCase(), path, { key: free, ...(method === 'post' || method === 'patch' ? { body: {} } : {}) });
        expect(answer.status, `${method} ${path}`).toBe(429);
        conforms(method.toUpperCase(), path, answer);
      }
    }
  });

  it('answers an unknown path under /api/service with the documented 404', async () => {
    const answer = await t.api('GET', '/user/nothing-here');
    expect(answer.status).toBe(404);
    conforms('GET', '/user/nothing-here', answer, '/components/responses/NotFound');
  });

  it('documents what a mutation answers when its change cannot be saved', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-openapi-'));
    const failing = await startTestServer({ plan: 'pro', dataFile: join(dir, 'state.json'), logError: () => {} });
    try {
      const id = (await failing.api('POST', '/user/api-keys', { body: { name: 'kept' } })).json.id as string;
      // The directory disappears under the server, so the next save cannot write its temporary file.
      rmSync(dir, { recursive: true, force: true });
      const answers: [string, string, Answer][] = [
        ['POST', '/user/api-keys', await failing.api('POST', '/user/api-keys', { body: { name: 'lost' } })],
        ['PATCH', `/user/api-keys/${id}`, await failing.api('PATCH', `/user/api-keys/${id}`, { body: { enabled: false } })],
        ['DELETE', `/user/api-keys/${id}`, await failing.api('DELETE', `/user/api-keys/${id}`)],
      ];
      for (const [method, path, answer] of answers) {
        expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(503);
        expect(answer.json.code).toBe('UNAVAILABLE');
        conforms(method, path, answer);
      }
    } finally {
      await failing.close().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('was exercised on every documented status except unexpected failures (500); 503 has its own test above', () => {
    const documented: string[] = [];
    for (const template of Object.keys(doc.paths)) {
      for (const method of METHODS) {
        const operation = doc.paths[template][method];
        for (const status of Object.keys(operation?.responses ?? {})) {
          if (status === '500' || status === '503') continue;
          documented.push(`${method.toUpperCase()} ${template} ${status}`);
        }
      }
    }
    expect(documented.filter((label) => !seen.has(label))).toEqual([]);
  });
});
