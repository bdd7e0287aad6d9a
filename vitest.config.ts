import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { bundleDefines } from './scripts/openapi-json.mjs';

/**
 * Two tiers, run one after the other (sequence.groupOrder). The in-process
 * tier runs in the test's own process: pure logic, the server in-process,
 * and every command through main(argv, io, deps). The process tier is what
 * only a process shows: the built bin/svc.js and svc serve as children,
 * signals, pipes, a real terminal (tmux), shells, packaging, a full disk.
 * Each test file says which on its first line, `// tier: in-process` or
 * `// tier: process`; an in-process file that starts a child process fails
 * (test/setup/in-process.ts).
 */
const TIERS = ['in-process', 'process'] as const;
type Tier = (typeof TIERS)[number];

const testFiles = readdirSync('test', { recursive: true })
  .map((file) => `test/${String(file).replaceAll('\\', '/')}`)
  .filter((file) => file.endsWith('.test.ts'));

function tierOf(file: string): Tier {
  const tier = /^\/\/ tier: (\S+)\n/.exec(readFileSync(file, 'utf8'))?.[1];
  if (!TIERS.includes(tier as Tier)) {
    throw new Error(`${file} must begin with its tier, "// tier: in-process" (starts no child process) or "// tier: process" (may start them)`);
  }
  return tier as Tier;
}
const tiers = new Map(testFiles.map((file) => [file, tierOf(file)]));
const inTier = (tier: Tier) => testFiles.filter((file) => tiers.get(file) === tier);

/**
 * The in-process tier's files share their workers' module cache (isolate
 * off): importing svc's modules afresh for each file, now that a command's
 * tests are a folder of files, cost the tier 135 s against 48 s shared
 * (`npx vitest run --project in-process`, then with `--no-isolate`, 2 cores). The CLI keeps no
 * state at module level (test/docs/layout.test.ts) but which signals it holds
 * (src/cli/terminal/held-signals.ts), which every subscription gives back, and
 * every file sets its own home (test/setup/home.ts). A file that replaces a
 * module (vi.mock) needs its own module cache, and gets it in a project of
 * its own.
 */
const mocksModules = (file: string) => /\bvi\.mock\(/.test(readFileSync(file, 'utf8'));

// The version the bundle carries (scripts/build.mjs), so svc in-process says what the built svc says.
const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };

export default defineConfig({
  define: await bundleDefines(version),
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // expect.poll waits for an event; its default second runs out on a loaded machine.
    expect: { poll: { timeout: 10_000 } },
    // vitest's default is a worker less than the cores: one on a two-core
    // machine. The process tier's files spend their time waiting on child
    // processes and terminals: on two cores its wall time was 410 s with two
    // workers (a whole `npm test`) and 283 s with three (`npx vitest run
    // --project process --maxWorkers=3`), which keeps CI's four Node lines
    // inside their 30 minutes.
    maxWorkers: Math.max(3, availableParallelism() - 1),
    globalSetup: ['test/setup/global.ts'],
    setupFiles: ['test/setup/home.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'in-process',
          include: inTier('in-process').filter((file) => !mocksModules(file)),
          setupFiles: ['test/setup/in-process.ts'],
          sequence: { groupOrder: 0 },
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'in-process-mocks',
          include: inTier('in-process').filter(mocksModules),
          setupFiles: ['test/setup/in-process.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'process',
          include: inTier('process'),
          setupFiles: ['test/setup/process.ts'],
          sequence: { groupOrder: 1 },
          // Children, terminals and shells on two cores another test run shares: a watchdog, not a measure, so
          // long enough that a loaded machine (two npm test side by side) never meets it. Tests wait on events.
          testTimeout: 60_000,
          hookTimeout: 60_000,
          expect: { poll: { timeout: 30_000 } },
        },
      },
    ],
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      exclude: ['src/**/*.d.ts'],
      reporter: ['text-summary', ['text', { skipFull: true }], 'json-summary'],
    },
  },
});
