// tier: process
/**
 * The bundle's cli-table3 is changed by scripts/table-plugins.mjs
 * (tableCells) to look up each cell's options without the work of the
 * original; here the changed copy, built as the bundle builds it, and the
 * original draw the same random tables and must print the same text.
 */
import { build } from 'esbuild';
import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type Table from 'cli-table3';
import { tableCells } from '../../scripts/table-plugins.mjs';
import { freshSeedNote, hostileString, SEEDS } from '../helpers/hostile-text.js';

const require = createRequire(import.meta.url);
const Original = require('cli-table3') as typeof Table;
let Changed: typeof Table;
let dir: string;

beforeAll(async () => {
  console.info(`table-plugins: ${freshSeedNote('test/unit/table-plugins.test.ts')}`);
  dir = mkdtempSync(join(tmpdir(), 'svc-table-plugins-'));
  const entry = join(dir, 'entry.cjs');
  writeFileSync(entry, `module.exports = require(${JSON.stringify(require.resolve('cli-table3'))});\n`);
  // Only this plugin: everything else, string-width included, is the original's.
  await build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'cjs', outfile: join(dir, 'table.cjs'), plugins: [tableCells], logLevel: 'warning' });
  Changed = require(join(dir, 'table.cjs')) as typeof Table;
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CHAR_NAMES = ['top', 'top-mid', 'top-left', 'top-right', 'bottom', 'bottom-mid', 'bottom-left', 'bottom-right', 'left', 'left-mid', 'mid', 'mid-mid', 'right', 'right-mid', 'middle'];
const camel = (name: string) => name.replace(/-(.)/, (_, c: string) => c.toUpperCase());

/** Option values as a caller may give them: set, empty, null (skipped, as undefined is). */
const charValue = fc.oneof(fc.constantFrom('', ' ', '|', '─', '┼', '\x1b[2m|\x1b[22m'), fc.constant(null));
/** Border characters under their own names and their camel-case ones, both of which cli-table3 reads. */
const chars = fc.dictionary(fc.constantFrom(...CHAR_NAMES, ...CHAR_NAMES.map(camel)), charValue, { maxKeys: 8 });
const padding = fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constant(null));
const style = fc.record(
  { 'padding-left': padding, paddingLeft: padding, 'padding-right': padding, paddingRight: padding, compact: fc.boolean(), head: fc.constant([]), border: fc.constant([]) },
  { requiredKeys: [] },
);
const text = fc.oneof(
  hostileString,
  fc.string({ unit: fc.constantFrom('a', 'Z', '0', ' ', '…', '\x1b[1m', '\x1b[22m', '\x1b[32m', '\x1b[39m', '日', '\n'), maxLength: 30 }),
);
const cell = fc.oneof(text, fc.record({ content: text, chars, style }, { requiredKeys: ['content'] }));

const table = fc.integer({ min: 1, max: 4 }).chain((columns) =>
  fc.record({
    options: fc.record(
      {
        chars,
        style,
        colWidths: fc.array(fc.oneof(fc.integer({ min: 1, max: 16 }), fc.constant(null)), { minLength: columns, maxLength: columns }),
        wordWrap: fc.boolean(),
        head: fc.array(text, { minLength: columns, maxLength: columns }),
        truncate: fc.constantFrom('…', '~'),
      },
      { requiredKeys: [] },
    ),
    rows: fc.array(fc.array(cell, { minLength: columns, maxLength: columns }), { maxLength: 4 }),
  }),
);

type Drawn = { text: string } | { threw: string };

/** cli-table3 writes into the options and cells it is given, so each copy draws its own. */
function draw(Ctor: typeof Table, options: object, rows: unknown[][]): Drawn {
  try {
    const drawn = new Ctor(structuredClone(options) as Table.TableConstructorOptions);
    drawn.push(...(structuredClone(rows) as Table.HorizontalTableRow[]));
    return { text: drawn.toString() };
  } catch (error) {
    return { threw: String(error) };
  }
}

describe('the bundle’s cli-table3 (tableCells)', () => {
  it.each(SEEDS)('draws every table as the original does ($pass seed $seed)', ({ seed }) => {
    fc.assert(
      fc.property(table, ({ options, rows }) => {
        expect(draw(Changed, options, rows)).toEqual(draw(Original, options, rows));
      }),
      { seed, numRuns: 500 },
    );
  });

  it('draws svc’s own tables as the original does: borderless, unpadded, fixed widths, colour', () => {
    const options = {
      chars: Object.fromEntries(CHAR_NAMES.map((name) => [name, name === 'middle' ? '  ' : ''])),
      style: { 'padding-left': 0, 'padding-right': 0, head: [], border: [], compact: true },
      colWidths: [24, 12, 8],
      wordWrap: false,
      head: ['\x1b[1mID\x1b[22m', '\x1b[1mNAME\x1b[22m', '\x1b[1mSTATUS\x1b[22m'],
    };
    const rows = Array.from({ length: 60 }, (_, i) => [`key_${String(i).padStart(20, '0')}`, i % 3 === 0 ? '日本語のキー-長い名前' : `ci-${i}`, '\x1b[32menabled\x1b[39m']);
    const drawn = draw(Changed, options, rows);
    expect(drawn).toEqual(draw(Original, options, rows));
    expect('text' in drawn && drawn.text.split('\n')).toHaveLength(61);
  });
});
