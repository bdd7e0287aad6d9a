// Writes man/svc.1 (or the file given) from the command tree: `npm run man`.
// test/docs/man.test.ts fails when the committed page is stale.
//
// The renderer, scripts/man-page.ts, is build-time code and no part of the
// shipped bundle, so this bundles it with the command tree from the sources
// (src/cli/app/run.ts) into a temporary file of its own and runs that.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { loadSources, root } from './load-sources.mjs';

const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
const target = process.argv[2] ?? join(root, 'man/svc.1');

const { renderManPage, buildProgram, realDeps } = await loadSources(
  'gen-man',
  [
    "export { renderManPage } from './scripts/man-page.ts';",
    "export { buildProgram } from './src/cli/app/run.ts';",
    "export { realDeps } from './src/cli/terminal/deps.ts';",
  ].join('\n'),
  // What scripts/build.mjs defines that building the tree reads: `--version` is an option of it.
  { define: { SVC_VERSION: JSON.stringify(pkg.version) } },
);

// Rendering only reads the command tree; nothing is ever written to this IO.
const io = {
  stdout: new PassThrough(),
  stderr: new PassThrough(),
  stdin: new PassThrough(),
  stdinIsTTY: false,
  stdoutIsTTY: false,
  stderrIsTTY: false,
  colorStdout: false,
  colorStderr: false,
  columns: 80,
  rows: 24,
  env: {},
};

await writeFile(target, renderManPage(buildProgram(io, realDeps).program, { version: pkg.version }));
console.log(`wrote ${target}`);
