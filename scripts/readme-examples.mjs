// Runs README.md's console examples (scripts/readme-tour.ts) against a
// reference server of their own and writes what they print into README.md:
// `node scripts/readme-examples.mjs` (after a change to what a command prints).
// test/docs/readme-tour.test.ts fails while the README's examples do not have
// the shape of what svc prints.
//
// The tour runs svc's sources in this process, bundled here with esbuild the
// way scripts/build.mjs bundles them (the same table width measure), since
// Node does not run TypeScript itself.
import { build } from 'esbuild';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from './openapi-json.mjs';
import { tableWidth, tableWithoutColors } from './table-plugins.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const readmePath = join(root, 'README.md');
const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));

const { outputFiles } = await build({
  stdin: {
    contents: "export { readTour, runTour, patchReadme, TOUR_COLUMNS } from './scripts/readme-tour.ts';",
    resolveDir: root,
    sourcefile: 'readme-examples-entry.ts',
    loader: 'ts',
  },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20.18',
  write: false,
  define: { SVC_VERSION: JSON.stringify(pkg.version), SVC_OPENAPI: JSON.stringify(await openApiDocument()) },
  plugins: [tableWidth, tableWithoutColors],
  // The keyring binding is loaded only by a keyring profile, which the tour has none of.
  external: ['@napi-rs/keyring'],
  logLevel: 'warning',
});

const work = await mkdtemp(join(tmpdir(), 'svc-readme-examples-'));
try {
  const file = join(work, 'readme-examples.cjs');
  await writeFile(file, outputFiles[0].contents);
  const { readTour, runTour, patchReadme, TOUR_COLUMNS } = createRequire(import.meta.url)(file);
  const readme = await readFile(readmePath, 'utf8');
  const blocks = readTour(readme);
  const patched = patchReadme(readme, blocks, await runTour(blocks));
  await writeFile(readmePath, patched);
  const commands = blocks.reduce((sum, block) => sum + block.commands.length, 0);
  console.log(`README.md: ${commands} commands of ${blocks.length} examples run on a terminal ${TOUR_COLUMNS} columns wide, and their output written.`);
} finally {
  await rm(work, { recursive: true, force: true });
}
