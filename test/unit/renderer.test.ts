// tier: in-process
import fc from 'fast-check';
import stringWidth from 'string-width';
import { beforeAll, describe, expect, it } from 'vitest';
import type { IO } from '../../src/cli/terminal/io.js';
import { Renderer, type Column, type Field } from '../../src/cli/terminal/renderer.js';
import { tone, type Line, type Segment, type Tone } from '../../src/cli/text/text.js';
import { freshSeedNote, hostileString, SEEDS, stripColour, UNSAFE_OUTPUT } from '../helpers/hostile-text.js';
import { memoryIO, terminalLibraries } from '../helpers/memory-io.js';
import { readKey } from '../../src/client/key-view.js';
import { keyColumns as viewColumns } from '../../src/cli/views/keys.js';

beforeAll(() => console.info(`renderer: ${freshSeedNote('test/unit/renderer.test.ts')}`));

const TTY: Partial<IO> = { stdoutIsTTY: true, stderrIsTTY: true, colorStdout: true, colorStderr: true };

function renderer(overrides: Partial<IO> = {}, quiet = false) {
  const memory = memoryIO(overrides);
  return { ...memory, r: new Renderer(memory.io, { quiet }, terminalLibraries) };
}

describe('messages', () => {
  it('go to stderr: info plain, success with ✓, warn with !, failure with error: on its first line', () => {
    const { r, stdout, stderr } = renderer();
    r.info('Saved.');
    r.success('Created key.');
    r.warn('Store it now.');
    r.failure(['Not found.', '  hint: check the id']);
    expect(stdout()).toBe('');
    expect(stderr()).toBe('Saved.\n✓ Created key.\n! Store it now.\nerror: Not found.\n  hint: check the id\n');
  });

  it('colour the prefixes and tones on a terminal, with chalk level 1 codes', () => {
    const { r, stderr } = renderer(TTY);
    r.success(['Created key ', tone('ci', 'bold'), '.']);
    r.warn('careful');
    r.failure(['gone']);
    expect(stderr()).toBe('\x1b[32m✓\x1b[39m Created key \x1b[1mci\x1b[22m.\n\x1b[33m!\x1b[39m careful\n\x1b[31merror:\x1b[39m gone\n');
  });

  it('take each argument as a line, an array as one line of segments, the prefix on the first only', () => {
    const { r, stderr } = renderer();
    r.success('one', ['two ', tone('2', 'cyan')]);
    r.info();
    expect(stderr()).toBe('✓ one\ntwo 2\n');
  });

  it('are silenced by quiet, but for warnings and failures', () => {
    const { r, stderr } = renderer(TTY, true);
    r.info('a');
    r.success('b');
    r.progress('c');
    r.clearProgress();
    r.warn('d');
    r.failure(['e']);
    expect(stripColour(stderr())).toBe('! d\nerror: e\n');
  });

  it('wrap at spaces on a terminal, later parts indented two, colour taking no width', () => {
    const { r, stderr } = renderer({ ...TTY, columns: 30 });
    r.warn(['Is the server running? ', tone('svc serve --local', 'cyan'), '; it starts the reference server']);
    const lines = stderr().trimEnd().split('\n');
    expect(lines.map(stripColour)).toEqual(['! Is the server running?', '  svc serve --local; it starts', '  the reference server']);
    expect(lines[0]).toBe('\x1b[33m!\x1b[39m Is the server running?');
    expect(lines[1]).toBe('  \x1b[36msvc serve --local\x1b[39m; it starts');
  });

  it('never break inside a command a person may copy: in backticks, or svc and one of its commands', () => {
    const id = 'key_0fnfu8idtdapl2nb1ruh';
    const sentence = `! This is the only time this secret is shown: store it now. If it is lost, it cannot be recovered: revoke the key (svc keys revoke ${id}) and create a new one.`;
    for (let columns = 30; columns <= 160; columns++) {
      const { r, stderr } = renderer({ stderrIsTTY: true, columns });
      r.info(sentence, 'Run `svc login --profile work --base-url https://api.example.com` again, then svc keys list --name ci.');
      const text = stderr();
      expect(text, `at ${columns} columns`).toContain(`svc keys revoke ${id}`);
      expect(text).toContain('`svc login --profile work --base-url https://api.example.com`');
      expect(text).toContain('svc keys list --name ci.');
      // Prose around them still breaks, and every line fits unless a command alone is wider.
      for (const line of text.trimEnd().split('\n')) if (!line.includes('svc ')) expect(line.length).toBeLessThanOrEqual(columns);
    }
    // `svc` as a word of a sentence is no command.
    const { r, stderr } = renderer({ stderrIsTTY: true, columns: 20 });
    r.info('svc could not read the key svc is using.');
    expect(stderr()).toBe('svc could not read\n  the key svc is\n  using.\n');
  });

  it('keep a word longer than the line whole, and count wide characters as two columns', () => {
    const { r, stderr } = renderer({ stderrIsTTY: true, columns: 20 });
    r.info(`sk_${'a'.repeat(40)} is long`);
    r.info('日本語の文字 日本語の文字 日本語');
    expect(stderr()).toBe(`sk_${'a'.repeat(40)}\n  is long\n日本語の文字\n  日本語の文字\n  日本語\n`);
  });

  it('wrap at any width: no line wider than the terminal (wide characters two columns) but a word alone, no word split, every word kept in order, and as many rows as messageRows says', () => {
    const word = fc.array(fc.constantFrom('a', 'b', 'x', 'é', '日', '語', '-'), { minLength: 1, maxLength: 30 }).map((chars) => chars.join(''));
    const property = fc.property(
      fc.array(word, { minLength: 1, maxLength: 40 }),
      fc.integer({ min: 10, max: 120 }),
      fc.constantFrom('info' as const, 'warn' as const),
      (words, columns, kind) => {
        const { r, stderr } = renderer({ stderrIsTTY: true, columns });
        const text = words.join(' ');
        if (kind === 'info') r.info(text);
        else r.warn(text);
        const lines = stderr().slice(0, -1).split('\n');
        for (const line of lines) {
          if (line.trim().split(' ').length > 1) expect(stringWidth(line), line).toBeLessThanOrEqual(columns);
        }
        const shown = lines.flatMap((line) => line.trim().split(' '));
        expect(shown).toEqual(kind === 'warn' ? ['!', ...words] : words);
        const rows = lines.reduce((sum, line) => sum + Math.max(1, Math.ceil(stringWidth(line) / columns)), 0);
        expect(r.messageRows(kind, [text])).toBe(rows);
      },
    );
    for (const { seed } of SEEDS) fc.assert(property, { seed, numRuns: 200 });
  });

  it('are not wrapped when stderr is not a terminal', () => {
    const long = 'word '.repeat(30).trim();
    const { r, stderr } = renderer({ columns: 40 });
    r.info(long);
    expect(stderr()).toBe(`${long}\n`);
  });

  it('show what a server sent as escapes, never as controls', () => {
    const { r, stderr } = renderer(TTY);
    r.failure([['Key ', tone('\x1b]52;c;aGk=\x07', 'bold'), ' not found'], 'line\nbreak\u202e']);
    expect(stripColour(stderr())).toBe('error: Key \\x1b]52;c;aGk=\\x07 not found\nline\\nbreak\\u202e\n');
  });
});

describe('progress', () => {
  it('rewrites one line on a terminal, cut to fit it, and clears it', () => {
    const { r, stderr } = renderer({ stderrIsTTY: true, columns: 12 });
    r.progress('waiting 3 s for the rate limit');
    r.progress(['waiting ', tone('2 s', 'bold')]);
    r.clearProgress();
    expect(stderr()).toBe('\r\x1b[2Kwaiting 3 …\r\x1b[2Kwaiting 2 s\r\x1b[2K');
  });

  it('writes nothing when stderr is not a terminal', () => {
    const { r, stderr } = renderer({ stdoutIsTTY: true });
    r.progress('waiting');
    r.clearProgress();
    expect(stderr()).toBe('');
  });
});

describe('data on stdout', () => {
  it('json: one document and a newline, whatever quiet says', () => {
    const { r, stdout, stderr } = renderer(TTY, true);
    r.json({ name: 'a\u202eb', n: 1 });
    expect(stdout()).toBe('{\n  "name": "a\\u202eb",\n  "n": 1\n}\n');
    expect(stderr()).toBe('');
  });

  it('lines: each sanitised, never wrapped', () => {
    const { r, stdout } = renderer({ ...TTY, columns: 10 });
    r.lines([`sk_${'a'.repeat(30)}`, ['x', tone('\x1b[2J', 'dim')]]);
    expect(stdout()).toBe(`sk_${'a'.repeat(30)}\nx\x1b[2m\\x1b[2J\x1b[22m\n`);
  });
});

interface Key {
  id: string;
  name: string;
  hint: string;
  status: string;
  workspace: string;
  created: string;
  expires: string;
  used: string;
}

const STATUS_TONE: Record<string, Tone> = { enabled: 'green', disabled: 'yellow' };

/** Shaped like `keys list`: every value without spaces, so a line's cells can be found by splitting it. */
const keyColumns: Column<Key>[] = [
  { header: 'ID', human: (k) => k.id, plain: (k) => k.id },
  { header: 'NAME', human: (k) => k.name, plain: (k) => k.name, maxWidth: 24 },
  { header: 'KEY', human: (k) => tone(k.hint, 'dim'), plain: (k) => k.hint, dropRank: 5 },
  { header: 'STATUS', human: (k) => tone(k.status, STATUS_TONE[k.status]!), plain: (k) => k.status },
  { header: 'WORKSPACE', human: (k) => k.workspace, plain: (k) => k.workspace, dropRank: 2 },
  { header: 'CREATED', human: (k) => k.created, plain: (k) => k.created, dropRank: 1 },
  { header: 'EXPIRES', human: (k) => k.expires, plain: (k) => k.expires, dropRank: 3 },
  { header: 'LAST-USED', human: (k) => k.used, plain: (k) => k.used, dropRank: 4 },
];

/** Widths: ID 24, NAME 12, KEY 12, STATUS 8, WORKSPACE 23, CREATED 13, EXPIRES 11, LAST-USED 9; 126 in all with the gaps. */
function keys(count: number): Key[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `key_${String(i).padStart(20, '0')}`,
    name: `laptop-${String(i).padStart(5, '0')}`,
    hint: 'sk_ab12…wxyz',
    status: i % 3 === 0 ? 'disabled' : 'enabled',
    workspace: `ws_${String(i % 7).padStart(20, '0')}`,
    created: '3-minutes-ago',
    expires: 'in-3-months',
    used: 'never',
  }));
}

function tableLines<T>(columns: Partial<IO>, cols: readonly Column<T>[], rows: readonly T[]) {
  const { r, stdout } = renderer({ stdoutIsTTY: true, colorStdout: true, ...columns });
  r.table(cols, rows);
  const raw = stdout();
  expect(raw.endsWith('\n')).toBe(true);
  return { raw, lines: stripColour(raw).slice(0, -1).split('\n') };
}

/** Where each cell of a line starts, in terminal columns. */
function cellStarts(line: string): number[] {
  return [...line.matchAll(/\S+/g)].map((m) => stringWidth(line.slice(0, m.index)));
}

describe('the key table at a narrow width', () => {
  const now = Date.parse('2026-06-01T00:00:00Z');
  const longNamed = [
    readKey({ id: 'key_00000000000000000001', name: 'a-much-longer-name-than-the-rest-of-them', hint: 'sk_ab12…wxyz', enabled: true, createdAt: now - 86_400_000, expiresAt: now + 90 * 86_400_000, lastUsedAt: now - 180_000 }),
    readKey({ id: 'key_00000000000000000002', name: 'ci', hint: 'sk_cd34…wxyz', enabled: false, createdAt: now, expiresAt: null, lastUsedAt: null }),
  ];
  it.each([
    [60, ['ID', 'NAME', 'STATUS']],
    [100, ['ID', 'NAME', 'KEY', 'STATUS', 'EXPIRES', 'LAST USED']],
  ])('at %i columns a long name is cut before the status or the expiry is left out', (columns, headers) => {
    const { lines } = tableLines({ columns }, viewColumns(undefined, now, columns), longNamed);
    expect(lines[0]!.split(/ {2,}/)).toEqual(headers);
    for (const line of lines) expect(stringWidth(line), line).toBeLessThanOrEqual(columns);
    expect(lines[1]).toContain('a-much-longer');
  });
});

describe('table on a terminal', () => {
  it.each([
    [120, ['ID', 'NAME', 'KEY', 'STATUS', 'WORKSPACE', 'EXPIRES', 'LAST-USED']],
    [80, ['ID', 'NAME', 'KEY', 'STATUS', 'LAST-USED']],
    [40, ['ID', 'NAME', 'STATUS']],
    [200, ['ID', 'NAME', 'KEY', 'STATUS', 'WORKSPACE', 'CREATED', 'EXPIRES', 'LAST-USED']],
  ])('at %i columns leaves out the lowest-ranked columns until it fits', (columns, headers) => {
    const { lines } = tableLines({ columns }, keyColumns, keys(10));
    expect(lines[0]!.split(/ {2,}/)).toEqual(headers);
    // At 40, the columns without a rank stay although they are wider.
    if (columns >= 80) for (const line of lines) expect(stringWidth(line)).toBeLessThanOrEqual(columns);
  });

  it('aligns cells under headers two spaces apart, header bold, no trailing spaces', () => {
    const { raw, lines } = tableLines({ columns: 80 }, keyColumns, keys(3));
    expect(lines).toEqual([
      'ID                        NAME          KEY           STATUS    LAST-USED',
      'key_00000000000000000000  laptop-00000  sk_ab12…wxyz  disabled  never',
      'key_00000000000000000001  laptop-00001  sk_ab12…wxyz  enabled   never',
      'key_00000000000000000002  laptop-00002  sk_ab12…wxyz  enabled   never',
    ]);
    expect(raw.split('\n')[0]).toContain('\x1b[1mID\x1b[22m');
    expect(raw.split('\n')[1]).toContain('\x1b[33mdisabled\x1b[39m');
    expect(raw).not.toMatch(/ +(\x1b\[[0-9;]*m)*$/m);
  });

  it('prints the header alone for no rows', () => {
    const { lines } = tableLines({ columns: 80 }, keyColumns.slice(0, 2), []);
    expect(lines).toEqual(['ID  NAME']);
  });

  it('cuts a cell past its maxWidth with …, in terminal columns', () => {
    const rows = keys(3);
    rows[0]!.name = 'n'.repeat(30);
    rows[1]!.name = '日本語の鍵の名前がとても長い';
    rows[2]!.name = 'short';
    const { lines } = tableLines({ columns: 80 }, [keyColumns[1]!, keyColumns[3]!], rows);
    expect(lines).toEqual([
      'NAME                      STATUS',
      `${'n'.repeat(23)}…  disabled`,
      '日本語の鍵の名前がとて…   enabled',
      'short                     enabled',
    ]);
  });

  it.each([49, 50, 51, 101])('keeps every column where it was across 50-row chunks, for %i rows', (count) => {
    const rows = keys(count);
    // The widest name only in the last row: a chunk that measured its own rows would place STATUS earlier.
    rows[count - 1]!.name = 'the-widest-name-of-all';
    const { lines } = tableLines({ columns: 120 }, keyColumns, rows);
    expect(lines).toHaveLength(count + 1);
    const starts = cellStarts(lines[0]!);
    expect(starts).toHaveLength(6);
    for (const line of lines.slice(1)) expect(cellStarts(line)).toEqual(starts);
    expect(starts[2]! - starts[1]!).toBe('the-widest-name-of-all'.length + 2);
  });

  it('aligns wide characters, emoji and combining marks by the columns they take', () => {
    const names = ['日本語', '😀ok', 'plain', 'e\u0301te', 'ｆｕｌｌ', '👩‍💻dev', '🇯🇵', '日本語の鍵の名前がとても長い', '😀😀😀😀😀😀😀😀😀😀😀😀😀'];
    const rows = keys(names.length).map((k, i) => ({ ...k, name: names[i]! }));
    const { lines } = tableLines({ columns: 200 }, [keyColumns[1]!, keyColumns[3]!], rows);
    expect(lines[9]).toMatch(/^(😀){11}…  /u);
    const at = stringWidth(lines[0]!.slice(0, lines[0]!.indexOf('STATUS')));
    for (const line of lines.slice(1)) {
      const status = line.search(/(en|dis)abled$/);
      expect(stringWidth(line.slice(0, status))).toBe(at);
    }
  });
});

describe('a table drawn as its rows arrive', () => {
  it('on a terminal: the first batch fixes the columns and widths, a longer cell later is cut with …, one header', () => {
    const { r, stdout } = renderer({ stdoutIsTTY: true, columns: 80 });
    const table = r.tableStream(keyColumns.slice(0, 2));
    const [first, second] = keys(2);
    table.rows([first!]);
    const atFirst = stdout();
    table.rows([{ ...second!, name: 'a-much-longer-name-than-before' }]);
    table.end();
    expect(atFirst).toBe('ID                        NAME\nkey_00000000000000000000  laptop-00000\n');
    expect(stdout()).toBe(`${atFirst}key_00000000000000000001  a-much-long…\n`);
  });

  it('piped: the header once, each batch written as it comes; with no rows, the header alone at the end', () => {
    const { r, stdout } = renderer({ columns: 20 });
    const table = r.tableStream(keyColumns.slice(0, 2));
    table.rows([]);
    expect(stdout()).toBe('');
    table.rows(keys(1));
    expect(stdout()).toBe('ID\tNAME\nkey_00000000000000000000\tlaptop-00000\n');
    table.rows(keys(2).slice(1));
    table.end();
    expect(stdout()).toBe('ID\tNAME\nkey_00000000000000000000\tlaptop-00000\nkey_00000000000000000001\tlaptop-00001\n');
    const empty = renderer({ columns: 20 });
    const none = empty.r.tableStream(keyColumns.slice(0, 2));
    none.end();
    expect(empty.stdout()).toBe('ID\tNAME\n');
  });
});

describe('table piped', () => {
  it('is a header line and tab-separated plain values of every column, sanitised', () => {
    const { r, stdout } = renderer({ columns: 20 });
    const rows = keys(2);
    rows[0]!.name = 'tab\there\nnewline';
    r.table(keyColumns.slice(0, 4), rows);
    expect(stdout()).toBe(
      'ID\tNAME\tKEY\tSTATUS\n' +
        'key_00000000000000000000\ttab\\there\\nnewline\tsk_ab12…wxyz\tdisabled\n' +
        'key_00000000000000000001\tlaptop-00001\tsk_ab12…wxyz\tenabled\n',
    );
  });
});

describe('record', () => {
  const fields: Field[] = [
    { label: 'Profile', human: 'default', plain: 'default' },
    { label: 'Rate limit', human: ['28 of 30 ', tone('left', 'green')], plain: '28' },
    { label: 'Key', human: tone('sk_ab12…wxyz', 'dim'), plain: 'sk_ab12…wxyz' },
  ];

  it('on a terminal: bold labels padded to the widest, two spaces, the value', () => {
    const { r, stdout } = renderer({ stdoutIsTTY: true, colorStdout: true });
    r.record(fields);
    expect(stripColour(stdout())).toBe('Profile     default\nRate limit  28 of 30 left\nKey         sk_ab12…wxyz\n');
    expect(stdout().split('\n')[0]).toBe('\x1b[1mProfile\x1b[22m     default');
  });

  it('piped: the label in lower case, a tab, the plain value, sanitised', () => {
    const { r, stdout } = renderer();
    r.record([...fields, { label: 'Name', human: 'x', plain: 'a\tb\nc' }]);
    expect(stdout()).toBe('profile\tdefault\nrate limit\t28\nkey\tsk_ab12…wxyz\nname\ta\\tb\\nc\n');
  });
});

/** Output holds nothing but printable text, the renderer's newlines and its colour codes. */
function assertClean(text: string) {
  expect(stripColour(text)).not.toMatch(UNSAFE_OUTPUT);
}

const tones = fc.constantFrom<Tone>('bold', 'dim', 'green', 'yellow', 'red', 'cyan');
const segment: fc.Arbitrary<Segment> = fc.oneof(hostileString, fc.record({ text: hostileString, tone: tones }));
const line: fc.Arbitrary<Line> = fc.oneof(segment, fc.array(segment, { maxLength: 4 }));
const lines = fc.array(line, { minLength: 1, maxLength: 4 });
const terminal = fc.record({
  stdoutIsTTY: fc.boolean(),
  stderrIsTTY: fc.boolean(),
  colorStdout: fc.boolean(),
  colorStderr: fc.boolean(),
  columns: fc.integer({ min: 1, max: 160 }),
});

describe.each(SEEDS)('hostile text in every field ($pass seed $seed)', ({ seed }) => {
  it('messages, failures, progress and data lines hold no control but newlines and colour', () => {
    fc.assert(
      fc.property(terminal, fc.boolean(), lines, line, (io, quiet, text, one) => {
        const { r, stdout, stderr } = renderer(io, quiet);
        r.info(...text);
        r.success(one);
        r.warn(...text);
        r.failure(text);
        r.lines(text);
        assertClean(stdout());
        assertClean(stderr());
        const before = stderr().length;
        r.progress(one);
        r.clearProgress();
        assertClean(stderr().slice(before).replaceAll('\r\x1b[2K', ''));
        // Piped, one output line for each line given: nothing given can start another.
        if (!io.stderrIsTTY && !quiet) {
          const piped = renderer({ ...io, stderrIsTTY: false });
          piped.r.failure(text);
          expect(piped.stderr().split('\n')).toHaveLength(text.length + 1);
        }
      }),
      { seed, numRuns: 300 },
    );
  });

  const row = fc.record({ human: segment, plain: hostileString });
  const table = fc.record({
    headers: fc.array(hostileString, { minLength: 1, maxLength: 5 }),
    ranks: fc.array(fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }), { minLength: 5, maxLength: 5 }),
    maxWidths: fc.array(fc.option(fc.integer({ min: 1, max: 20 }), { nil: undefined }), { minLength: 5, maxLength: 5 }),
    rows: fc.array(fc.array(row, { minLength: 5, maxLength: 5 }), { maxLength: 60 }),
  });
  type Cell = { human: Segment; plain: string };
  const columnsOf = (t: { headers: string[]; ranks: (number | undefined)[]; maxWidths: (number | undefined)[] }): Column<Cell[]>[] =>
    t.headers.map((header, i) => ({ header, human: (r) => r[i]!.human, plain: (r) => r[i]!.plain, dropRank: t.ranks[i], maxWidth: t.maxWidths[i] }));

  it('a table on a terminal holds no control but newlines and colour, one line a row', () => {
    fc.assert(
      fc.property(table, fc.integer({ min: 1, max: 160 }), (t, columns) => {
        const { r, stdout } = renderer({ stdoutIsTTY: true, colorStdout: true, columns });
        r.table(columnsOf(t), t.rows);
        assertClean(stdout());
        expect(stdout().split('\n')).toHaveLength(t.rows.length + 2);
      }),
      { seed, numRuns: 150 },
    );
  });

  it('a piped table has a line per row and a tab between each two columns, nothing more', () => {
    fc.assert(
      fc.property(table, (t) => {
        const { r, stdout } = renderer();
        r.table(columnsOf(t), t.rows);
        assertClean(stdout().replaceAll('\t', ' '));
        const out = stdout().split('\n');
        expect(out).toHaveLength(t.rows.length + 2);
        expect(out.pop()).toBe('');
        for (const l of out) expect(l.split('\t')).toHaveLength(t.headers.length);
      }),
      { seed, numRuns: 150 },
    );
  });

  const field = fc.record({ label: hostileString, human: line, plain: hostileString });

  it('a record holds no control but newlines and colour, on a terminal or piped, a line a field', () => {
    fc.assert(
      fc.property(fc.array(field, { minLength: 1, maxLength: 6 }), fc.boolean(), (fields, tty) => {
        const { r, stdout } = renderer({ stdoutIsTTY: tty, colorStdout: tty });
        r.record(fields);
        const out = stdout().split('\n');
        expect(out).toHaveLength(fields.length + 1);
        if (tty) {
          assertClean(stdout());
        } else {
          assertClean(stdout().replaceAll('\t', ' '));
          for (const l of out.slice(0, -1)) expect(l.split('\t')).toHaveLength(2);
        }
      }),
      { seed, numRuns: 300 },
    );
  });
});
