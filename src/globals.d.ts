/** Replaced at build time with package.json's version. */
declare const SVC_VERSION: string;
/** Replaced at build time with docs/openapi.yaml as a JSON object. */
declare const SVC_OPENAPI: unknown;
