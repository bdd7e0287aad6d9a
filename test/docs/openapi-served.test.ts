// tier: process
/**
 * `GET /_local/openapi.json` from the built bundle: docs/openapi.yaml as
 * JSON, put in at build time, so the bundle carries no YAML parser.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openApiDocument } from '../../scripts/openapi-json.mjs';
import { ADMIN_TOKEN, startServe, type ServeProcess } from '../abuse/helpers.js';
import { call } from '../helpers/cli.js';

let server: ServeProcess;
beforeAll(async () => {
  server = await startServe();
});
afterAll(() => server.stop());

it('serves docs/openapi.yaml as JSON, behind the admin token', async () => {
  const res = await call(server.url, 'GET', '/_local/openapi.json', ADMIN_TOKEN);
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(res.json).toEqual(await openApiDocument());
  expect((await call(server.url, 'GET', '/_local/openapi.json', server.apiKey)).status).toBe(401);
});

it('has no YAML parser in the bundle', () => {
  const bundle = readFileSync(resolve(import.meta.dirname, '../../dist/main.js'), 'utf8');
  expect(bundle).not.toContain('YAMLException');
  expect(bundle).not.toContain('js-yaml');
});
