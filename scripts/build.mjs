// Bundles the CLI into dist/ with code splitting, so each command pulls in
// only what it uses: start-up time is a feature of a CLI.
import { build } from 'esbuild';
import { readFile, rename, rm } from 'node:fs/promises';

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));

const root = new URL('../', import.meta.url);
const dist = new URL('dist', root);
// Built aside and swapped in, so a test process running the old bundle is
// never left with half a directory.
const staging = new URL(`dist.${process.pid}`, root);
const retired = new URL(`dist.${process.pid}.old`, root);

await build({
  entryPoints: { main: 'src/cli/main.ts' },
  outdir: staging.pathname,
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

await rename(dist, retired).catch((error) => {
  if (error.code !== 'ENOENT') throw error;
});
await rename(staging, dist);
await rm(retired, { recursive: true, force: true });
