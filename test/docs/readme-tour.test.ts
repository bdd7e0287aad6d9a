// tier: in-process
/**
 * README.md's console examples against what svc prints now: every block
 * run as scripts/readme-tour.ts runs it (the tour's own reference server,
 * a terminal of TOUR_COLUMNS columns), and each command's output compared
 * by shape: the same lines in the same order, the same column headers and
 * words, with ids, secrets, key hints and numbers left out of it. Wording
 * changed in the code fails here until `node scripts/readme-examples.mjs`
 * writes it into the README.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { elide, readTour, runTour, shape, TOUR_COLUMNS, type TourBlock, type TourRun } from '../../scripts/readme-tour.js';

const readme = readFileSync(resolve(import.meta.dirname, '../../README.md'), 'utf8');
const blocks: TourBlock[] = readTour(readme);
let run: TourRun;

beforeAll(async () => {
  run = await runTour(blocks);
}, 60_000);

describe("README.md's console examples", () => {
  it('are the tour: a server, a login, keys made, listed, switched, rotated, refused, profiles', () => {
    const lines = blocks.flatMap((block) => block.commands.map((command) => command.line));
    expect(lines[0]).toBe('svc serve --local');
    expect(lines).toContain('svc keys list');
    expect(lines.length).toBeGreaterThan(15);
    expect(readme).toContain(`on a terminal ${TOUR_COLUMNS} columns wide`);
  });

  it('have the shape of what each command prints now', () => {
    blocks.forEach((block, b) =>
      block.commands.forEach((command, c) => {
        const actual = run.outputs[b]![c]!;
        expect(shape(command.output), `$ ${command.line}\n(run node scripts/readme-examples.mjs to write what it prints now)`).toBe(
          shape(elide(command.output, actual)),
        );
      }),
    );
  });

  it('can be followed offline: every login succeeds against a server the tour itself started (issue 39, 3)', () => {
    const logins = run.lines.flatMap((lines, b) => lines.map((line, c) => ({ line, output: run.outputs[b]![c]! }))).filter(({ line }) => / svc login /.test(` ${line}`));
    expect(logins.map(({ line }) => line)).toContain('echo "$KEY" | svc login --with-key --profile work --base-url http://127.0.0.1:8788');
    for (const { line, output } of logins) expect(output[0], line).toMatch(/^✓ Logged in to http:\/\/127\.0\.0\.1:878[78] /);
  });

  it('show a key list with the columns a terminal of that width shows', () => {
    const at = blocks.flatMap((block, b) => block.commands.map((command, c) => ({ command, output: run.outputs[b]![c]! })));
    const list = at.find(({ command }) => command.line === 'svc keys list' && command.output[0]?.startsWith('ID'))!;
    expect(list.command.output[0]!.split(/ {2,}/)).toEqual(list.output[0]!.split(/ {2,}/));
  });

  it('never break a command a person may copy across lines', () => {
    for (const line of run.outputs.flat(2)) {
      expect(line.split('`').length % 2, line).toBe(1);
      expect(line, line).not.toMatch(/\S.*\bsvc(?: [\w-]+)?$/);
      expect(line, line).not.toMatch(/\(svc [^)]*$/);
    }
  });
});
