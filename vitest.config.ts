import { defineConfig } from 'vitest/config';
import { openApiDocument } from './scripts/openapi-json.mjs';

export default defineConfig({
  define: { SVC_VERSION: '"0.0.0-test"', SVC_OPENAPI: JSON.stringify(await openApiDocument()) },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
