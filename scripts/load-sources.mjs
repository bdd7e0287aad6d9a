// Loads TypeScript sources into a script of ours (gen-man.mjs, readme-examples.mjs):
// Node does not run TypeScript itself, so the entry is bundled with esbuild
// the way scripts/build.mjs bundles svc, written to a temporary file of its
// own, and required from there.
import { build } from 'esbuild';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
