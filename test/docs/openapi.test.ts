// tier: in-process
/**
 * docs/openapi.yaml is a valid OpenAPI 3.1 document by a third-party
 * validator, and names what the code names. Whether the server's answers
 * match it is test/server/openapi.test.ts.
 */
import { resolve } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/contract/errors.js';
import { PLANS, REQUESTS_PER_MINUTE } from '../../src/contract/plans.js';

const DOCUMENT = resolve(import.meta.dirname, '../../docs/openapi.yaml');

describe('docs/openapi.yaml', () => {
  it('is a valid OpenAPI 3.1 document (@apidevtools/swagger-parser)', async () => {
    const api = (await SwaggerParser.validate(DOCUMENT)) as { openapi: string };
    expect(api.openapi).toMatch(/^3\.1\./);
  });

  it('describes the endpoints of section A5, each behind the bearer scheme', async () => {
    const doc = (await SwaggerParser.parse(DOCUMENT)) as any;
    const offered = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
      Object.entries<any>(item)
        .filter(([, op]) => op?.responses && !op.responses['405'])
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(offered.sort()).toEqual(
      ['GET /user/api-keys', 'POST /user/api-keys', 'GET /user/api-keys/{id}', 'PATCH /user/api-keys/{id}', 'DELETE /user/api-keys/{id}', 'GET /workspace'].sort(),
    );
    expect(doc.security).toEqual([{ bearer: [] }]);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('lists every error code the code knows, and the 503 code of section A6', async () => {
    const doc = (await SwaggerParser.parse(DOCUMENT)) as any;
    const documented: string[] = doc.components.schemas.ErrorCode.enum;
    expect(documented).toEqual(expect.arrayContaining([...ERROR_CODES, 'UNAVAILABLE']));
    expect(documented).toHaveLength(new Set([...ERROR_CODES, 'UNAVAILABLE']).size);
  });

  it('names the plans and ceilings of src/contract/plans.ts', async () => {
    const doc = (await SwaggerParser.parse(DOCUMENT)) as any;
    expect(doc.components.schemas.Workspace.properties.plan.enum).toEqual([...PLANS]);
    expect(doc.components.schemas.Workspace.properties.requestsPerMinute.enum).toEqual(PLANS.map((p) => REQUESTS_PER_MINUTE[p]));
    expect(doc.components.headers['RateLimit-Limit'].schema.enum).toEqual(PLANS.map((p) => REQUESTS_PER_MINUTE[p]));
  });
});
