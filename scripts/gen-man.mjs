// Writes man/svc.1 (or the file given) from the command tree: `npm run man`.
// test/docs/man.test.ts fails when the committed page is stale.
//
// The renderer, scripts/man-page.ts, is build-time code and no part of the
// shipped bundle, so this bundles it with the command tree from the sources
// (src/cli/run.ts) into a temporary file of its own and runs that.
import { build } from 'esbuild';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
const target = process.argv[2] ?? join(root, 'man/svc.1');

const { outputFiles } = await build({
  stdin: {
    contents: [
      "export { renderManPage } from './scripts/man-page.ts';",
      "export { buildProgram } from './src/cli/run.ts';",
      "export { realDeps } from './src/cli/deps.ts';",
    ].join('\n'),
    resolveDir: root,
    sourcefile: 'gen-man-entry.ts',
    loader: 'ts',
  },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20.18',
  write: false,
  // What scripts/build.mjs defines that building the tree reads: `--version` is an option of it.
  define: { SVC_VERSION: JSON.stringify(pkg.version) },
  // A native addon, never bundled (scripts/build.mjs); the man page does not load it.
  external: ['@napi-rs/keyring'],
  logLevel: 'warning',
});

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

const work = await mkdtemp(join(tmpdir(), 'svc-gen-man-'));
try {
  const file = join(work, 'gen-man.cjs');
  await writeFile(file, outputFiles[0].contents);
  const { renderManPage, buildProgram, realDeps } = createRequire(import.meta.url)(file);
  await writeFile(target, renderManPage(buildProgram(io, realDeps).program, { version: pkg.version }));
} finally {
  await rm(work, { recursive: true, force: true });
}
console.log(`wrote ${target}`);
