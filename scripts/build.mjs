// Bundles the CLI into dist/ with code splitting, so each command pulls in
// only what it uses: start-up time is a feature of a CLI.
import { build } from 'esbuild';
import { readFile, rm } from 'node:fs/promises';

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));

await rm(new URL('../dist', import.meta.url), { recursive: true, force: true });
await build({
  entryPoints: { main: 'src/cli/main.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.18',
  minify: true,
  legalComments: 'none',
  chunkNames: 'chunks/[name]-[hash]',
  define: { SVC_VERSION: JSON.stringify(pkg.version) },
  // CommonJS dependencies bundled into ESM still call require() for Node built-ins.
  banner: { js: "import{createRequire as __svcCreateRequire}from'node:module';const require=__svcCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
