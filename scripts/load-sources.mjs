// Loads TypeScript sources into a script of ours (gen-man.mjs, readme-examples.mjs):
// Node does not run TypeScript itself, so the entry is bundled with esbuild
// the way scripts/build.mjs bundles svc, written to a temporary file of its
// own, and required from there.
import { build } from 'esbuild';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../', import.meta.url));

/**
 * The exports of `contents` (TypeScript, imports relative to the project's
 * root), bundled under `name` with `define` and `plugins`. The keyring
 * binding is a native addon, never bundled (scripts/build.mjs); none of
 * these scripts loads it.
 */
export async function loadSources(name, contents, { define = {}, plugins = [] } = {}) {
  const { outputFiles } = await build({
    stdin: { contents, resolveDir: root, sourcefile: `${name}-entry.ts`, loader: 'ts' },
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20.18',
    write: false,
    define,
    plugins,
    external: ['@napi-rs/keyring'],
    logLevel: 'warning',
  });
  const work = await mkdtemp(join(tmpdir(), `svc-${name}-`));
  try {
    const file = join(work, `${name}.cjs`);
    await writeFile(file, outputFiles[0].contents);
    return createRequire(import.meta.url)(file);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * svc's command tree, as built from the sources for `version`: what the
 * man page and the loader's argv grammar are written from. Building the
 * tree only declares it; nothing is ever written to its IO.
 */
export async function loadProgram(name, version, extra = []) {
  const exports = await loadSources(
    name,
    ["export { buildProgram } from './src/cli/app/run.ts';", "export { realDeps } from './src/cli/terminal/deps.ts';", ...extra].join('\n'),
    // What scripts/build.mjs defines that building the tree reads: `--version` is an option of it.
    { define: { SVC_VERSION: JSON.stringify(version) } },
  );
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
  return { program: exports.buildProgram(io, exports.realDeps).program, exports };
}
