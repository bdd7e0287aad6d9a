/** Replaced at build time with package.json's version. */
declare const SVC_VERSION: string;
/** Replaced at build time with docs/openapi.yaml as JSON text (scripts/openapi-json.mjs, bundleDefines). */
declare const SVC_OPENAPI_JSON: string;
