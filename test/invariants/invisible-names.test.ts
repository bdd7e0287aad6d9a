// tier: in-process
/**
 * docs/contract.md §C3, "nothing hidden in a name": names that differ only
 * by characters a terminal draws as nothing (a zero-width space, a soft
 * hyphen, a Hangul filler, a variation selector, a tag character) never
 * look alike, wherever svc shows them to a person: the table of `keys
 * list` on a terminal and its rows piped, `keys view`, the pick-list of a
 * command with no id, and the question before a revoke. None of them holds
 * such a character raw, and the table stays within the terminal's width.
 * Names are made of letters and invisible characters only: a backslash
 * (shown as is, so that escaping twice changes nothing) could spell out an
 * escape, a case the contract leaves out.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { displayWidth } from '../../src/cli/text/width.js';
import { useCommandTest } from '../helpers/command-test.js';
import { freshSeedNote, INVISIBLE, SEEDS, UNSAFE_OUTPUT } from '../helpers/hostile-text.js';

const FILE = 'test/invariants/invisible-names.test.ts';
beforeAll(() => console.info(`invisible names: ${freshSeedNote(FILE)}`));

const local = useCommandTest({ plan: 'pro' });
const COLUMNS = 160;

/** A visible name, and others made from it by planting invisible characters in it (never at its ends, which the server trims of white space). */
const names = fc
  .tuple(
    fc.string({ unit: fc.constantFrom('p', 'r', 'o', 'd'), minLength: 2, maxLength: 5 }),
    fc.array(fc.array(fc.tuple(fc.nat(), fc.constantFrom(...INVISIBLE)), { minLength: 1, maxLength: 2 }), { minLength: 1, maxLength: 2 }),
  )
  .map(([base, plantings]) => [
    base,
    ...plantings.map((planted) =>
      planted.reduce((name, [at, char]) => {
        const chars = [...name];
        const place = 1 + (at % (chars.length - 1));
        return [...chars.slice(0, place), char, ...chars.slice(place)].join('');
      }, base),
    ),
  ])
  .map((all) => [...new Set(all)]);

let run = 0;

/** Each key's line in `text`, its id and hint put as placeholders: what is left is how its name (and nothing unique to the key) was drawn. */
function linesOf(text: string, keys: readonly { id: string; hint: string }[]): string[] {
  return keys.map(({ id, hint }) => {
    const line = text.split('\n').find((l) => l.includes(hint) || l.includes(id));
    expect(line, `no line for ${id} in:\n${text}`).toBeDefined();
    return line!.replaceAll(id, '<id>').replaceAll(hint, '<hint>');
  });
}

function noneAlike(shown: readonly string[], surface: string): void {
  for (const line of shown) expect(line, surface).not.toMatch(UNSAFE_OUTPUT);
  expect(new Set(shown).size, `${surface}:\n${shown.join('\n')}`).toBe(shown.length);
}

describe.each(SEEDS)('names that differ by invisible characters ($pass seed $seed)', ({ seed }) => {
  it('never render alike, and none holds an invisible character raw', async () => {
    await fc.assert(
      fc.asyncProperty(names, async (variants) => {
        const prefix = `run${++run}-`;
        const keys: { id: string; hint: string; name: string }[] = [];
        for (const variant of variants) {
          const name = `${prefix}${variant}`;
          const created = await local.create(name);
          const hint = JSON.parse((await local.run('keys', 'view', created.id, '--json')).stdout).hint as string;
          keys.push({ id: created.id, hint, name });
        }

        const table = await local.onTerminal(['keys', 'list', '--name', prefix], [], { columns: COLUMNS });
        expect(table.exitCode, table.stderr).toBe(0);
        for (const line of table.stdout.split('\n')) expect(displayWidth(line)).toBeLessThanOrEqual(COLUMNS);
        noneAlike(linesOf(table.stdout, keys), 'keys list on a terminal');

        const piped = await local.run('keys', 'list', '--name', prefix);
        // Tabs are the piped rows' own column separators.
        noneAlike(linesOf(piped.stdout, keys).map((line) => line.replaceAll('\t', ' | ')), 'keys list piped');

        const views = await Promise.all(keys.map(async ({ id }) => (await local.onTerminal(['keys', 'view', id], [], { columns: COLUMNS })).stdout));
        noneAlike(
          views.map((view, i) => view.replaceAll(keys[i]!.id, '<id>').replaceAll(keys[i]!.hint, '<hint>').replace(/^.*(created|last used|expires).*$/gim, '')),
          'keys view',
        );

        const picker = await local.onTerminal(['keys', 'revoke'], [{ cancel: true }], { columns: COLUMNS });
        noneAlike(linesOf(picker.asked.join('\n'), keys), 'the pick-list of keys revoke');

        const questions = await Promise.all(keys.map(async ({ id }) => (await local.onTerminal(['keys', 'revoke', id], [{ cancel: true }])).asked.join('\n')));
        noneAlike(
          questions.map((question, i) => question.replaceAll(keys[i]!.id, '<id>')),
          'the question before a revoke',
        );
        for (const result of [table, piped, picker]) expect(result.stderr).not.toMatch(UNSAFE_OUTPUT);
      }),
      { seed, numRuns: 5 },
    );
  });
});
