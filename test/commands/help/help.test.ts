// tier: in-process
/**
 * Narrow terminals and help (issue 25, 7): `svc help <any command path>`,
 * help laid out at the terminal's width and broken between words, and the
 * key table leaving out what does not fit at 40 columns.
 */
import { describe, expect, it } from 'vitest';
import { svc } from '../../helpers/in-process.js';

const words = (text: string) => text.split(/\s+/).filter(Boolean);

describe('svc help <command path>', () => {
  it.each([
    [['help', 'keys', 'list'], ['keys', 'list', '--help']],
    [['keys', 'help', 'list'], ['keys', 'list', '--help']],
    [['help', 'keys', 'ls'], ['keys', 'list', '--help']],
    [['keys', 'help'], ['keys', '--help']],
    [['help', 'profile', 'use'], ['profile', 'use', '--help']],
    [['--profile', 'help', 'help', 'status'], ['status', '--help']],
  ])('svc %j shows what svc %j shows', async (asked, same) => {
    const result = await svc(asked, {});
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe((await svc(same, {})).stdout);
    expect(result.stdout).toMatch(/^Usage: svc /);
  });

  it('the help command says it takes a path', async () => {
    expect((await svc(['--help'], {})).stdout).toMatch(/^  help \[command...\] +show help for a command: svc help keys list$/m);
  });
});

describe('help on a terminal', () => {
  it.each([50, 60, 64, 100, 120])('at %i columns fits the width and breaks no word; an example stays one line', async (columns) => {
    for (const args of [['keys', 'rotate', '--help'], ['--help'], ['api', '--help'], ['status', '--help'], ['login', '--help']]) {
      const tty = await svc(args, {}, { tty: true, columns });
      const piped = await svc(args, {});
      for (const line of tty.stdout.split('\n')) if (!/^ {2}\$ /.test(line)) expect([...line].length, line).toBeLessThanOrEqual(columns);
      for (const example of piped.stdout.split('\n').filter((line) => /^ {2}\$ /.test(line))) expect(tty.stdout.split('\n')).toContain(example);
      // Only white space differs from the same help laid out for 80 columns: every word is whole.
      expect(words(tty.stdout)).toEqual(words(piped.stdout));
    }
  });

  it('at 120 columns, a paragraph of the notes below the options uses the width: no line of prose broken short of it (issue 39, 4)', async () => {
    const tty = await svc(['keys', 'rotate', '--help'], {}, { tty: true, columns: 120 });
    const notes = tty.stdout.slice(tty.stdout.indexOf('\nThe new secret is printed once.') + 1, tty.stdout.indexOf('\nExamples:'));
    const lines = notes.trim().split('\n');
    expect(lines.length).toBeGreaterThan(1);
    // Each line but the paragraph's last is broken only because the next word would not fit.
    for (const [i, line] of lines.slice(0, -1).entries()) expect([...line].length + 1 + lines[i + 1]!.trim().split(' ')[0]!.length, line).toBeGreaterThan(120);
  });

  it('piped, is laid out for 80 columns whatever the terminal', async () => {
    const piped = await svc(['keys', 'create', '--help'], {}, { columns: 40 });
    expect(piped.stdout).toBe((await svc(['keys', 'create', '--help'], {}, { columns: 200 })).stdout);
    for (const line of piped.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });
});
