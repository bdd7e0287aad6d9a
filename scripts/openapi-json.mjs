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
