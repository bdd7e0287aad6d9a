// Writes man/svc.1 from the built command tree: `npm run man` builds, then
// runs this. test/docs/man.test.ts fails when the committed page is stale.
import { readFile, writeFile } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import { renderMan } from '../dist/main.js';

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));

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
  env: {},
};

const target = new URL('../man/svc.1', import.meta.url);
await writeFile(target, await renderMan(io, { version: pkg.version }));
console.log(`wrote ${target.pathname}`);
