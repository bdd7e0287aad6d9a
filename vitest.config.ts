import { defineConfig } from 'vitest/config';

export default defineConfig({
  define: { SVC_VERSION: '"0.0.0-test"' },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
