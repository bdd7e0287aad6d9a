// Runs README.md's console examples (scripts/readme-tour.ts) against a
// reference server of their own and writes what they print into README.md:
// `node scripts/readme-examples.mjs` (after a change to what a command prints).
// test/docs/readme-tour.test.ts fails while the README's examples do not have
// the shape of what svc prints.
//
// The tour runs svc's sources in this process (scripts/load-sources.mjs).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadSources, root } from './load-sources.mjs';
import { bundleDefines } from './openapi-json.mjs';
import { tablePlugins } from './table-plugins.mjs';

const readmePath = join(root, 'README.md');
const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));

// The same table width measure as the shipped bundle.
const { readTour, runTour, patchReadme, TOUR_COLUMNS } = await loadSources(
  'readme-examples',
  "export { readTour, runTour, patchReadme, TOUR_COLUMNS } from './scripts/readme-tour.ts';",
  {
    define: await bundleDefines(pkg.version),
    plugins: tablePlugins,
  },
);
const readme = await readFile(readmePath, 'utf8');
const blocks = readTour(readme);
const patched = patchReadme(readme, blocks, await runTour(blocks));
await writeFile(readmePath, patched);
const commands = blocks.reduce((sum, block) => sum + block.commands.length, 0);
console.log(`README.md: ${commands} commands of ${blocks.length} examples run on a terminal ${TOUR_COLUMNS} columns wide, and their output written.`);
