// esbuild plugins for what the bundle takes from cli-table3, which draws
// svc's terminal tables (src/cli/terminal/renderer.ts). Shared, as
// tablePlugins, by scripts/build.mjs, scripts/readme-examples.mjs and
// bench/render.mjs, so the benchmark and the README draw with the table
// code svc ships.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const TEXT_DIR = fileURLToPath(new URL('../src/cli/text/', import.meta.url));
const FROM_CLI_TABLE3 = /[\\/]node_modules[\\/]cli-table3[\\/]/;

/**
 * cli-table3 measures every cell several times with string-width 4, which
 * builds a new ANSI regular expression on each call and runs its emoji
 * expression over the text, though the renderer has sized every column
 * already. It gets the renderer's own measure instead, which gives the same
 * number for every string (test/unit/render-text.test.ts checks that) and
 * answers the ASCII most cells hold without either expression. Measured,
 * Node 20.20.2, 2-core machine shared with other work:
 *   node bench/render.mjs --width-patch
 * Renderer.table of 5,000 rows, 80 columns, colour on, with this plugin and
 * without it, in turns: string-width ×1.24 of the patched draw (paired
 * median), 99 ms saved of the 717 ms `svc keys list` of 5,000 keys takes on
 * a terminal in the same run, 13.8% of the command (an earlier run: 75 ms,
 * ×1.23).
 */
export const tableWidth = {
  name: 'cli-table3-width',
  setup(build) {
    build.onResolve({ filter: /^string-width$/ }, (args) => (FROM_CLI_TABLE3.test(args.importer) ? { path: 'string-width', namespace: 'svc-table-width' } : undefined));
    build.onLoad({ filter: /.*/, namespace: 'svc-table-width' }, () => ({
      contents: "module.exports = require('./width.ts').displayWidth;",
      resolveDir: TEXT_DIR,
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

/** cli-table3 0.6.5's option lookup (src/cell.js). */
const OPTION_LOOKUP = `function firstDefined(...args) {
  return args.filter((v) => v !== undefined && v !== null).shift();
}

// HELPER FUNCTIONS
function setOption(objA, objB, nameB, targetObj) {
  let nameA = nameB.split('-');
  if (nameA.length > 1) {
    nameA[1] = nameA[1].charAt(0).toUpperCase() + nameA[1].substr(1);
    nameA = nameA.join('');
    targetObj[nameA] = firstDefined(objA[nameA], objA[nameB], objB[nameA], objB[nameB]);
  } else {
    targetObj[nameB] = firstDefined(objA[nameB], objB[nameB]);
  }
}`;

/** The same lookup, each option's camel-case name made once, and the first defined value found without building an array. */
const OPTION_LOOKUP_ONCE = `function firstDefined(a, b, c, d) {
  if (a !== undefined && a !== null) return a;
  if (b !== undefined && b !== null) return b;
  if (c !== undefined && c !== null) return c;
  if (d !== undefined && d !== null) return d;
  return undefined;
}

const camelNames = new Map();

function setOption(objA, objB, nameB, targetObj) {
  let nameA = camelNames.get(nameB);
  if (nameA === undefined) {
    const parts = nameB.split('-');
    if (parts.length > 1) {
      parts[1] = parts[1].charAt(0).toUpperCase() + parts[1].substr(1);
      nameA = parts.join('');
    } else {
      nameA = null;
    }
    camelNames.set(nameB, nameA);
  }
  if (nameA !== null) targetObj[nameA] = firstDefined(objA[nameA], objA[nameB], objB[nameA], objB[nameB]);
  else targetObj[nameB] = firstDefined(objA[nameB], objB[nameB]);
}`;

/** cli-table3 0.6.5's debug message as a cell is drawn (src/cell.js, Cell#draw). */
const DRAW_MESSAGE = `    let content = utils.truncate(this.content, 10, this.truncate);
    if (!lineNum) {
      info(\`\${this.y}-\${this.x}: \${this.rowSpan - lineNum}x\${this.colSpan} Cell \${content}\`);
    } else {
      // debug(\`\${lineNum}-\${this.x}: 1x\${this.colSpan} RowSpanCell \${content}\`);
    }
`;

/**
 * Two costs of cli-table3's cells that svc's tables never use, most of a
 * 5,000-row table's drawing between them (bench/render.mjs, --cpu-prof):
 * - for every cell, eighteen options (fifteen border characters and two
 *   paddings, each under two names in two objects) are looked up by
 *   splitting and capitalising the name and gathering the candidates into
 *   an array; the bundle's lookup gives the same values without that work;
 * - every cell is cut to ten columns, escape codes and all, for a message
 *   to cli-table3's debug log, which keeps it only when a table has the
 *   `debug` option; svc's never do (src/cli/terminal/renderer.ts), and the
 *   bundle leaves the message out.
 * test/unit/table-plugins.test.ts draws tables with the patched and the
 * original cli-table3 and compares them. The code is replaced by its exact
 * text: a cli-table3 that changed it fails the build rather than running a
 * stale copy.
 */
export const tableCells = {
  name: 'cli-table3-cells',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/]cli-table3[\\/]src[\\/]cell\.js$/ }, async (args) => {
      let source = await readFile(args.path, 'utf8');
      for (const [was, now] of [
        [OPTION_LOOKUP, OPTION_LOOKUP_ONCE],
        [DRAW_MESSAGE, ''],
      ]) {
        if (!source.includes(was)) throw new Error(`${args.path} no longer holds the code scripts/table-plugins.mjs replaces:\n${was}`);
        source = source.replace(was, now);
      }
      return { contents: source, loader: 'js' };
    });
  },
};

/** Every change the bundle makes to cli-table3: what scripts/build.mjs ships, and what the benchmark and the README's examples draw with. */
export const tablePlugins = [tableCells, tableWidth, tableWithoutColors];
