// esbuild plugins for what the bundle takes from cli-table3, which draws
// svc's terminal tables (src/cli/render/renderer.ts). Shared by
// scripts/build.mjs and bench/render.mjs, so the benchmark measures the
// table code svc ships.
import { fileURLToPath } from 'node:url';

const RENDER_DIR = fileURLToPath(new URL('../src/cli/render/', import.meta.url));
const FROM_CLI_TABLE3 = /[\\/]node_modules[\\/]cli-table3[\\/]/;

/**
 * cli-table3 measures every cell several times with string-width 4, which
 * builds a new ANSI regular expression on each call and runs its emoji
 * expression over the text: most of the time of a 5,000-row table. It gets
 * the renderer's own measure instead, which gives the same number for
 * every string (test/unit/render-text.test.ts checks that) and answers the
 * ASCII most cells hold without either expression.
 */
export const tableWidth = {
  name: 'cli-table3-width',
  setup(build) {
    build.onResolve({ filter: /^string-width$/ }, (args) => (FROM_CLI_TABLE3.test(args.importer) ? { path: 'string-width', namespace: 'svc-table-width' } : undefined));
    build.onLoad({ filter: /.*/, namespace: 'svc-table-width' }, () => ({
      contents: "module.exports = require('./width.ts').displayWidth;",
      resolveDir: RENDER_DIR,
      loader: 'js',
    }));
  },
};

/**
 * cli-table3 loads @colors/colors only to colour a header or border style,
 * and catches the failure to load it; svc gives it no style (the renderer
 * colours cells itself), so the bundle carries a module that throws.
 */
export const tableWithoutColors = {
  name: 'cli-table3-without-colors',
  setup(build) {
    build.onResolve({ filter: /^@colors\/colors/ }, (args) => (FROM_CLI_TABLE3.test(args.importer) ? { path: args.path, namespace: 'svc-no-colors' } : undefined));
    build.onLoad({ filter: /.*/, namespace: 'svc-no-colors' }, () => ({
      contents: `throw new Error("svc's bundle leaves out @colors/colors: the renderer gives cli-table3 no style to colour");`,
      loader: 'js',
    }));
  },
};
