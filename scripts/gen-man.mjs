// Writes man/svc.1 (or the file given) from the command tree: `npm run man`.
// test/docs/man.test.ts fails when the committed page is stale.
//
// The renderer, scripts/man-page.ts, is build-time code and no part of the
// shipped bundle, so this bundles it with the command tree from the sources
// (src/cli/app/run.ts) into a temporary file of its own and runs that.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadProgram, root } from './load-sources.mjs';

const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
const target = process.argv[2] ?? join(root, 'man/svc.1');

const { program, exports } = await loadProgram('gen-man', pkg.version, ["export { renderManPage } from './scripts/man-page.ts';"]);
await writeFile(target, exports.renderManPage(program, { version: pkg.version }));
console.log(`wrote ${target}`);
