// docs/openapi.yaml as the object `GET /_local/openapi.json` answers. Parsed
// here, at build time, so the bundle carries the document as JSON and no YAML
// parser: svc itself never reads YAML, and a parser would weigh on the bundle
// for one fixed file. The YAML stays the source people edit and review.
import SwaggerParser from '@apidevtools/swagger-parser';

export const OPENAPI_YAML = new URL('../docs/openapi.yaml', import.meta.url);

/** The document as written: parsed only, its `$ref`s left as they are. */
export async function openApiDocument() {
  return SwaggerParser.parse(OPENAPI_YAML.pathname);
}

/**
 * esbuild's `define` for svc's sources: the version, and the document as a
 * JSON string that src/server/openapi.ts parses when asked for it. Defined
 * as an object instead, esbuild would build that object in an initialiser
 * it puts at the head of every module, so every command would pay for
 * a document only `svc serve` hands out.
 */
export async function bundleDefines(version) {
  return { SVC_VERSION: JSON.stringify(version), SVC_OPENAPI_JSON: JSON.stringify(JSON.stringify(await openApiDocument())) };
}
