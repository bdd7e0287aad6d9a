/**
 * The OpenAPI 3.1 document of docs/contract.md §A (docs/openapi.yaml), put
 * in as JSON when the bundle is built (scripts/openapi-json.mjs).
 */
export function openApiDocument(): unknown {
  return JSON.parse(SVC_OPENAPI_JSON);
}
