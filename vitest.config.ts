import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { openApiDocument } from './scripts/openapi-json.mjs';

/**
 * Two tiers, run one after the other (sequence.groupOrder). The fast tier
 * runs in the test's own process: pure logic, the server in-process, and
 * every command through main(argv, io, deps). The slow tier is what only a
 * process shows: the built bin/svc.js and svc serve as children, signals,
 * pipes, a real terminal (tmux), shells, packaging, a full disk. A test
 * file belongs to the slow tier when it can start a child process.
 */
const SPAWNS = /from '(execa|node:child_process)'|helpers\/(certificate|cli|terminal|tmpfs)\.js'|\b(serveProcess|startServe)\b/;

const testFiles = readdirSync('test', { recursive: true })
  .map((file) => `test/${String(file).replaceAll('\\', '/')}`)
  .filter((file) => file.endsWith('.test.ts'));
/** A file that starts a child process, by what it imports: the rule holds for files yet to be written. */
const isSlow = (file: string) => SPAWNS.test(readFileSync(file, 'utf8'));

// The version the bundle carries (scripts/build.mjs), so svc in-process says what the built svc says.
const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };

export default defineConfig({
  define: { SVC_VERSION: JSON.stringify(version), SVC_OPENAPI: JSON.stringify(await openApiDocument()) },
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // vitest's default is a worker less than the cores: one on a two-core
    // machine. The slow tier's files spend their time waiting on child
    // processes and terminals, so a second worker there halves its time.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    globalSetup: ['test/setup/global.ts'],
    setupFiles: ['test/setup/home.ts'],
    projects: [
      { extends: true, test: { name: 'fast', include: testFiles.filter((file) => !isSlow(file)), sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'slow', include: testFiles.filter(isSlow), sequence: { groupOrder: 1 } } },
    ],
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      exclude: ['src/**/*.d.ts'],
      reporter: ['text-summary', ['text', { skipFull: true }], 'json-summary'],
    },
  },
});
