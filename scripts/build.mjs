// Bundles the CLI into one file, dist/main.js: start-up time is a feature of
// a CLI. One file rather than code-split chunks because Node loads each ES
// module file on its own (resolve, read, compile, link), and splitting gave
// `keys list` a chain of more than a dozen small shared chunks, which cost it
// more than parsing the code it does not run (bench/startup.mjs, figures in
// bench/RESULTS.md). What a command does not use still costs no evaluation:
// esbuild turns each import() into an initialiser in the same file that runs
// on first use, so the server, the prompts and the completion generators
// only run for the commands that use them. The man page renderer is not in
// it at all: it is build-time code, which scripts/gen-man.mjs bundles itself.
import { build } from 'esbuild';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { writeArgvGrammar } from './argv-grammar.mjs';
import { bundleDefines } from './openapi-json.mjs';
import { tablePlugins } from './table-plugins.mjs';

// --metafile <file>: esbuild's account of how much of each input is in the
// bundle, for finding what grows it (https://esbuild.github.io/analyze/).
const { values: options } = parseArgs({ options: { metafile: { type: 'string' } } });

// conf compiles a JSON-schema validator (ajv, ajv-formats, fast-uri) only
// when given `schema`, `ajvOptions` or `rootSchema`, and runs migrations
// (semver) only when given `migrations`; svc passes none of them. Bundled as
// they are, they are still loaded with conf on every command that reads the
// profile: about 180 KB of code and 30 ms. They are replaced by a module that
// throws if conf ever reaches for them, so a future option that needs them
// fails every config test instead of silently validating nothing.
const UNUSED_BY_CONF = /^(ajv\/dist\/2020\.js|ajv-formats|semver)$/;
const confWithoutValidator = {
  name: 'conf-without-validator',
  setup(build) {
    build.onResolve({ filter: UNUSED_BY_CONF }, (args) =>
      /[\\/]node_modules[\\/]conf[\\/]/.test(args.importer) ? { path: args.path, namespace: 'unused-by-conf' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'unused-by-conf' }, (args) => ({
      contents: unusedModule(`svc's bundle leaves out ${args.path}: conf was asked for a schema or migrations (see scripts/build.mjs)`, 'esm'),
      loader: 'js',
    }));
  },
};

// @inquirer/prompts re-exports its editor prompt, which brings an external
// editor launcher and iconv-lite's code pages (about 550 KB); svc never
// opens an editor for a prompt.
const inquirerWithoutEditor = {
  name: 'inquirer-without-editor',
  setup(build) {
    build.onResolve({ filter: /^@inquirer\/editor$/ }, (args) =>
      /[\\/]node_modules[\\/]@inquirer[\\/]prompts[\\/]/.test(args.importer) ? { path: args.path, namespace: 'unused-by-svc' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'unused-by-svc' }, () => ({
      contents: unusedModule("svc's bundle leaves out @inquirer/editor: svc never opens an editor for a prompt", 'esm'),
      loader: 'js',
    }));
  },
};

// commander loads child_process, with dgram and the rest of its machinery,
// for stand-alone executable subcommands, which svc does not have.
const commanderWithoutChildProcess = {
  name: 'commander-without-child-process',
  setup(build) {
    build.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
      /[\\/]node_modules[\\/]commander[\\/]/.test(args.importer) ? { path: args.path, namespace: 'unused-by-commander' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'unused-by-commander' }, () => ({
      contents: unusedModule("svc's bundle leaves out child_process for commander, which svc never asks to run an executable subcommand", 'cjs'),
      loader: 'js',
    }));
  },
};

// atomically, conf's file writer, imports when-exit, which puts listeners on
// 18 signals and on exit as it loads, to delete temporary files left by a
// write cut short. conf only writes with atomically's writeFileSync, which is
// synchronous (no signal listener can run during it) and deletes its
// temporary file before it returns, so the listeners never had anything to
// do; they cost every command that reads the profile about 3 ms, and made
// bin/svc.js's Ctrl-C handler see a second SIGINT listener. The price: a
// signal that kills svc in the middle of saving a profile can leave a
// temporary file beside config.json, as SIGKILL always could; config.json
// itself is replaced by a rename, so it is never half-written.
const atomicallyWithoutExitHooks = {
  name: 'atomically-without-exit-hooks',
  setup(build) {
    build.onResolve({ filter: /^when-exit$/ }, (args) =>
      /[\\/]node_modules[\\/]atomically[\\/]/.test(args.importer) ? { path: args.path, namespace: 'no-exit-hooks' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'no-exit-hooks' }, () => ({
      contents: 'export default function whenExit() { return () => {}; }',
      loader: 'js',
    }));
  },
};

/**
 * A module whose every use throws `message`, for CommonJS importers
 * (module.exports) or ES ones (default, and the named export conf takes).
 */
function unusedModule(message, format) {
  return [
    `const fail = () => { throw new Error(${JSON.stringify(message)}); };`,
    'const unused = new Proxy(fail, { get: fail, apply: fail, construct: fail });',
    ...(format === 'cjs' ? ['module.exports = unused;'] : ['export default unused;', 'export const Ajv2020 = unused;']),
  ].join('\n');
}

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));

const root = new URL('../', import.meta.url);
const dist = new URL('dist', root);
// Built aside and swapped in, so a test process running the old bundle is
// never left with half a directory.
const staging = new URL(`dist.${process.pid}`, root);
const retired = new URL(`dist.${process.pid}.old`, root);

const result = await build({
  entryPoints: { main: 'src/cli/app/main.ts' },
  outdir: staging.pathname,
  bundle: true,
  // CommonJS, so that no command starts Node's ES module loader (about a
  // fifth of an empty Node start on Node 20); bin/ requires the bundle.
  format: 'cjs',
  platform: 'node',
  target: 'node20.18',
  minify: true,
  legalComments: 'none',
  define: await bundleDefines(pkg.version),
  // The OS keyring's binding is a native addon, an optional dependency
  // installed beside svc from the npm registry (a prebuilt binary per
  // platform); it cannot be bundled, and is required only by a profile that
  // keeps its key in the keyring (src/cli/secret-store/keyring.ts).
  external: ['@napi-rs/keyring'],
  plugins: [confWithoutValidator, inquirerWithoutEditor, atomicallyWithoutExitHooks, commanderWithoutChildProcess, ...tablePlugins],
  metafile: options.metafile !== undefined,
  logLevel: 'warning',
});
if (options.metafile) await writeFile(options.metafile, JSON.stringify(result.metafile));
// bin/load-bundle.js reads the bundle as Latin-1, which is UTF-8 only for
// ASCII; esbuild's default charset escapes everything else.
const bundled = await readFile(new URL('main.js', `${staging.href}/`));
const nonAscii = bundled.findIndex((byte) => byte > 0x7f);
if (nonAscii !== -1) throw new Error(`dist/main.js has a byte that is not ASCII at offset ${nonAscii}; bin/load-bundle.js reads it as Latin-1`);
// The package is "type": "module"; this marks the bundle as what it is.
await writeFile(new URL('package.json', `${staging.href}/`), `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);
// bin/load-bundle.js picks a command's code cache by the words of its
// command line, before the bundle is loaded; the program's grammar goes
// beside the bundle, so the two are always of the same build.
await writeArgvGrammar(staging.pathname, pkg.version);

await rename(dist, retired).catch((error) => {
  if (error.code !== 'ENOENT') throw error;
});
await rename(staging, dist);
await rm(retired, { recursive: true, force: true });
