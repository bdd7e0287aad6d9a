// tier: in-process
import { describe, expect, it } from 'vitest';
import { Messages, escapeControls, printRows, visible, wrap, type Column } from '../../src/cli/output.js';
import { memoryIO } from '../helpers/memory-io.js';

interface Row {
  id: string;
  name: string;
  note: string;
}

const columns: Column<Row>[] = [
  { header: 'ID', human: (r, s) => s.bold(r.id), plain: (r) => r.id },
  { header: 'NAME', human: (r) => r.name, plain: (r) => r.name },
  { header: 'NOTE', human: (r) => r.note, plain: (r) => r.note, dropRank: 1 },
];

const rows: Row[] = Array.from({ length: 5_000 }, (_, i) => ({ id: `k${i}`, name: 'x'.repeat(i % 17), note: `note ${i}\twith tab` }));

const strip = (line: string) => line.replace(/\x1b\[[0-9;]*m/g, '');

describe('printRows', () => {
  it('aligns every column of a terminal table, however many rows', () => {
    const { io, stdout } = memoryIO({ stdoutIsTTY: true, colorStdout: true, columns: 200 });
    printRows(io, columns, rows);
    const lines = stdout().trimEnd().split('\n').map(strip);
    expect(lines).toHaveLength(5_001);
    const nameAt = lines[0]!.indexOf('NAME');
    const noteAt = lines[0]!.indexOf('NOTE');
    for (const [i, line] of lines.slice(1).entries()) {
      expect(line.slice(nameAt, nameAt + rows[i]!.name.length)).toBe(rows[i]!.name);
      expect(line.slice(noteAt)).toBe(rows[i]!.note);
    }
  });

  it('leaves out droppable columns until the table fits the terminal', () => {
    const { io, stdout } = memoryIO({ stdoutIsTTY: true, columns: 30 });
    printRows(io, columns, rows.slice(0, 20));
    const lines = stdout().trimEnd().split('\n');
    expect(lines[0]).toBe('ID   NAME');
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(30);
  });

  it('prints tab-separated rows with a header when piped, tabs in values folded', () => {
    const { io, stdout } = memoryIO();
    printRows(io, columns, rows.slice(0, 2));
    expect(stdout()).toBe('ID\tNAME\tNOTE\nk0\t\tnote 0 with tab\nk1\tx\tnote 1 with tab\n');
  });
});

describe('server text on a terminal', () => {
  it('escapeControls shows control characters and escape sequences as escapes, keeps text, tabs and newlines', () => {
    expect(escapeControls('\x1b]52;c;aGk=\x07 ok\t\u00e9\n\x9b2J')).toBe('\\x1b]52;c;aGk=\\x07 ok\t\u00e9\n\\x9b2J');
  });

  it('visible keeps it to one line and cuts it past 200 characters', () => {
    expect(visible('a\nb\tc\x1b[2J')).toBe('a\\nb\\tc\\x1b[2J');
    expect([...visible('é'.repeat(300))]).toHaveLength(200);
    expect(visible('é'.repeat(300)).endsWith('é…')).toBe(true);
    expect(visible('x'.repeat(200))).toBe('x'.repeat(200));
  });
});

describe('wrap', () => {
  it('breaks a long line between words, indenting what follows', () => {
    expect(wrap('Is the server running? `svc serve --local` starts the reference server', 30)).toBe(
      'Is the server running? `svc\n  serve --local` starts the\n  reference server',
    );
  });

  it('leaves short lines, and the lines of a message, as they are', () => {
    expect(wrap('one\n  two three', 40)).toBe('one\n  two three');
  });

  it('keeps a word longer than the line whole, and counts colour codes as no width', () => {
    expect(wrap(`sk_${'a'.repeat(40)} is long`, 20)).toBe(`sk_${'a'.repeat(40)}\n  is long`);
    expect(wrap('\x1b[33m!\x1b[39m fits in ten', 13)).toBe('\x1b[33m!\x1b[39m fits in ten');
  });

  it('Messages wrap on a terminal only', () => {
    const long = 'word '.repeat(30).trim();
    const tty = memoryIO({ stderrIsTTY: true, columns: 40 });
    new Messages(tty.io).info(long);
    expect(tty.stderr().split('\n').every((line) => line.length <= 40)).toBe(true);
    const piped = memoryIO({ columns: 40 });
    new Messages(piped.io).info(long);
    expect(piped.stderr()).toBe(`${long}\n`);
  });
});
