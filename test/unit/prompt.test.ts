// tier: in-process
/**
 * The prompter on a terminal stand-in: keys written to stdin the way a
 * terminal delivers them, several in one chunk when they come in one write
 * (a paste, fast typing). What a real terminal makes of it is in
 * test/e2e/prompts.test.ts.
 */
import fc from 'fast-check';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createPrompter, type Choice } from '../../src/cli/terminal/prompt.js';
import { memoryIO } from '../helpers/memory-io.js';
import { shownText } from '../helpers/shown-text.js';

const DOWN = '\x1b[B';
const BACKSPACE = '\x7f';

/**
 * What a terminal shows of what inquirer drew: colours and the cursor's
 * visibility left out, and its moves to a column taken as moves to the
 * first (it writes nothing after a move to another one: that is where it
 * leaves the cursor).
 */
const shown = (text: string) => shownText(text.replace(/\x1b\[[\d;?]*[mlh]/g, '').replace(/\x1b\[\d*G/g, '\r'));

/** A prompter over a stdin that says it is a terminal, and a way to wait for what it draws. */
function terminal(size: { columns?: number; rows?: number } = {}) {
  const resized = new Set<() => void>();
  const onResize = (listener: () => void) => {
    resized.add(listener);
    return () => resized.delete(listener);
  };
  const mem = memoryIO({ stdinIsTTY: true, stderrIsTTY: true, ...size, onResize });
  Object.assign(mem.io.stdin, { isTTY: true, setRawMode: () => mem.io.stdin });
  const stdin = mem.io.stdin as PassThrough;
  const stderr = mem.io.stderr as PassThrough;
  /** Resolves once what has been drawn (as a terminal shows it) satisfies `test`. */
  const drawn = (test: (screen: string) => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (!test(shown(mem.stderr()))) return false;
        stderr.off('data', onData);
        resolve();
        return true;
      };
      const onData = () => setImmediate(check);
      stderr.on('data', onData);
      check();
    });
  /** The terminal made `columns` wide, told as a SIGWINCH would tell it. */
  const resize = (columns: number) => {
    Object.assign(mem.io, { columns });
    for (const listener of [...resized]) listener();
  };
  return { prompter: createPrompter(mem.io), write: (keys: string) => stdin.write(keys), drawn, resize, screen: () => shown(mem.stderr()) };
}

const choicesOf = (names: string[]): Choice<number>[] => names.map((name, i) => ({ name, value: i, description: `id-${i}` }));
const matches = (choice: Choice<number>, filter: string) => `${choice.name} ${choice.description}`.toLowerCase().includes(filter.toLowerCase());

/** Names as a person would filter them: no key a terminal reads as a command (Tab, Enter, Esc, Backspace). */
const name = fc.stringMatching(/^[a-zA-Z0-9 _.-]{1,12}$/);

describe('the search list, fed keys in one write', () => {
  it('answers with the first row the filter leaves, even with the cursor moved before the filter came with Enter', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(name, { minLength: 2, maxLength: 20 }),
        fc.nat(),
        fc.nat(),
        fc.nat({ max: 3 }),
        async (names, pick, start, downs) => {
          const choices = choicesOf(names);
          const source = names[pick % names.length]!;
          const from = start % source.length;
          const filter = source.slice(from, from + 1 + ((pick >> 4) % (source.length - from)));
          const { prompter, write, drawn, screen } = terminal();
          const answer = prompter.search('Key:', choices);
          // A terminal shows no trailing blanks: a name is looked for as it appears.
          await drawn((s) => s.includes(names[0]!.trimEnd()));
          if (downs > 0) {
            write(DOWN.repeat(downs));
            await drawn((s) => s.split('\n').some((line) => line.startsWith(`❯ ${names[Math.min(downs, names.length - 1)]}`.trimEnd())));
          }
          write(`${filter}\r`);
          const expected = choices.find((c) => matches(c, filter))!;
          expect(await answer).toBe(expected.value);
          expect(screen().split('\n').at(-1)!.trimEnd()).toBe(`✔ Key: ${expected.name}`.trimEnd());
        },
      ),
      { numRuns: 60 },
    );
  });

  it('answers nothing to Enter while the filter leaves no row, and the row of the filter typed then', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(name, { minLength: 1, maxLength: 12 }), fc.nat(), async (names, pick) => {
        const choices = choicesOf(names);
        // '#' is in no name and no description.
        const nothing = `${names[pick % names.length]}#`;
        const { prompter, write, drawn, screen } = terminal();
        const answer = prompter.search('Key:', choices);
        await drawn((s) => s.includes(names[0]!.trimEnd()));
        write(`${nothing}\r\r`);
        await drawn((s) => s.includes('No results found'));
        // The filter typed before Enter stays; taking back the '#' and Enter answers with what it leaves.
        write(`${BACKSPACE}\r`);
        const expected = choices.find((c) => matches(c, nothing.slice(0, -1)))!;
        expect(await answer).toBe(expected.value);
        expect(screen().split('\n').at(-1)!.trimEnd()).toBe(`✔ Key: ${expected.name}`.trimEnd());
      }),
      { numRuns: 40 },
    );
  });

  it('ignores keys that came after Enter in the same write: the answer and the line left on screen are the row Enter took', async () => {
    const { prompter, write, drawn, screen } = terminal();
    const answer = prompter.search('Key:', choicesOf(['laptop', 'deliv3', 'bootstrap']));
    await drawn((s) => s.includes('laptop'));
    write(`deliv\r${DOWN}x\r`);
    expect(await answer).toBe(1);
    expect(screen().split('\n').at(-1)).toBe('✔ Key: deliv3');
  });
  it('puts the row whose name is the filter, whole, before rows whose names only hold it', async () => {
    // Newest first, as pick-lists show keys: the one named exactly what was typed is the oldest.
    const choices = ['bulk-199', 'bulk-19', 'bulk-1', 'bulk-10'].map((name, i) => ({ name: `${name}  sk_ab…cd`, value: i, description: `key_${i}9`, exact: [name, `key_${i}9`] }));
    for (const [typed, meant] of [['bulk-1', 2], ['KEY_19', 1]] as const) {
      const { prompter, write, drawn } = terminal();
      const answer = prompter.search('Key:', choices);
      await drawn((s) => s.includes('bulk-10'));
      write(`${typed}\r`);
      expect(await answer, typed).toBe(meant);
    }
  });

  it('shows no more rows than fit the terminal with the lines around them, each row cut to one line of its width', async () => {
    for (const [size, rowsShown] of [
      [{ columns: 80, rows: 10 }, 5],
      [{ columns: 20, rows: 15 }, 10],
      [{ columns: 80, rows: 40 }, 12],
    ] as const) {
      for (const many of [false, true]) {
        const { prompter, drawn, screen, write } = terminal(size);
        const choices = choicesOf(Array.from({ length: 30 }, (_, i) => `key-number-${String(i).padStart(2, '0')}-of-thirty`));
        const answer = many ? prompter.pickMany('Keys:', choices) : prompter.search('Key:', choices);
        await drawn((s) => s.includes('key-number-00'));
        const rows = screen().split('\n').filter((line) => /^[❯ ][◯◉]? key-number/.test(line));
        expect(rows, JSON.stringify({ ...size, many })).toHaveLength(rowsShown);
        for (const row of rows) expect([...row].length, row).toBeLessThan(size.columns);
        write('\r');
        await answer;
      }
    }
  });

  it('draws a list again, cut to the new width, when the terminal is resized, with no key pressed', async () => {
    const { prompter, drawn, screen, write, resize } = terminal({ columns: 80, rows: 30 });
    const answer = prompter.search('Key:', choicesOf(['a-rather-long-key-name-that-fills-the-width-of-a-narrow-terminal', 'b']));
    await drawn((s) => s.includes('narrow-terminal'));
    resize(30);
    await drawn((s) => s.split('\n').some((line) => line.startsWith('❯ a-rather-long-key-name') && line.endsWith('…')));
    expect(screen().split('\n').filter((line) => line.startsWith('❯ a-rather')).at(-1)!.length).toBeLessThan(30);
    write('\r');
    expect(await answer).toBe(0);
  });

  it("leaves the filter as typed on Up, Down and Tab, whatever readline's history holds", async () => {
    const { prompter, write, drawn, screen } = terminal();
    const answer = prompter.search('Key:', choicesOf(['laptop', 'deliv3', 'deliv4', 'bootstrap']));
    await drawn((s) => s.includes('laptop'));
    // Enter with no row leaves "zz" in readline's history, where Up would fetch it; Tab would add a tab to the line.
    write(`zz\r${BACKSPACE}${BACKSPACE}deliv\x1b[A\t${DOWN}4\r`);
    expect(await answer).toBe(2);
    expect(screen().split('\n').at(-1)).toBe('✔ Key: deliv4');
  });
});

describe('the other lists, fed keys in one write', () => {
  // inquirer's select and checkbox handle each key as it comes, and draw before the next: what came before Enter is applied.
  it('a select answers with the row the keys before Enter moved to, by arrow or by typed letters', async () => {
    for (const [keys, expected] of [[`${DOWN}${DOWN}\r`, 2], ['be\r', 1], [`g${DOWN}\r`, 2]] as const) {
      const { prompter, write, drawn, screen } = terminal();
      const answer = prompter.select('Key:', choicesOf(['alpha', 'beta', 'gamma']));
      await drawn((s) => s.includes('alpha'));
      write(keys);
      expect(await answer, JSON.stringify(keys)).toBe(expected);
      expect(screen().split('\n').at(-1)).toBe(`✔ Key: ${['alpha', 'beta', 'gamma'][expected]}`);
    }
  });

});

describe('the many-key list, fed keys in one write', () => {
  const TAB = '\t';

  it('answers with the rows marked before Enter, whatever the filter shows at Enter', async () => {
    const { prompter, write, drawn, screen } = terminal();
    const answer = prompter.pickMany('Keys:', choicesOf(['alpha', 'beta', 'gamma']));
    await drawn((s) => s.includes('alpha'));
    write(`${DOWN}${TAB}${DOWN}${TAB}alp\r`);
    expect(await answer).toEqual([1, 2]);
    expect(screen().split('\n').at(-1)).toBe('✔ Keys: beta, gamma');
  });

  it('takes digits and spaces as filter text, never as marks: a pasted name with its Enter answers the row of that name alone', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.stringMatching(/^[a-z]{1,6}-\d{1,3}( [a-z0-9]{1,4})?$/), { minLength: 2, maxLength: 30 }), fc.nat(), fc.nat(5), async (names, pick, downs) => {
        const target = names[pick % names.length]!;
        const { prompter, write, drawn, screen } = terminal({ rows: 60 });
        const answer = prompter.pickMany('Keys:', names.map((name, i) => ({ name, value: i, exact: [name] })));
        await drawn((s) => s.includes(names[0]!));
        // The cursor moved first, then the name and Enter in one write, as a paste with its newline comes.
        write(`${DOWN.repeat(downs)}${target}\r`);
        expect(await answer).toEqual([names.indexOf(target)]);
        expect(screen().split('\n').at(-1)).toBe(`✔ Keys: ${target}`);
      }),
      { numRuns: 60 },
    );
  });

  it('is the one-key list with a mark column: the same rows, the same line of keys, and Tab that marks only here', async () => {
    const hint = (screen: string) => screen.split('\n').find((line) => line.startsWith('type to filter'));
    const one = terminal();
    const picked = one.prompter.search('Keys:', choicesOf(['alpha', 'beta']));
    await one.drawn((s) => s.includes('alpha'));
    const many = terminal();
    const marked = many.prompter.pickMany('Keys:', choicesOf(['alpha', 'beta']));
    await many.drawn((s) => s.includes('alpha'));
    expect(hint(one.screen())).toBe('type to filter • ↑↓ navigate • ⏎ select');
    expect(hint(many.screen())).toBe("type to filter • ↑↓ navigate • tab mark • ⏎ take ❯'s row");
    expect(one.screen()).toContain('❯ alpha\n  beta');
    expect(many.screen()).toContain('❯◯ alpha\n ◯ beta');
    // Tab on alpha, then Enter on beta: the one-key list takes the row Enter is on, the many-key list the marked one.
    one.write(`${TAB}${DOWN}\r`);
    many.write(`${TAB}`);
    await many.drawn((s) => hint(s)?.endsWith('take the 1 marked') === true);
    many.write(`${DOWN}\r`);
    expect(await picked).toBe(1);
    expect(await marked).toEqual([0]);
  });

  it('answers nothing to Enter while the filter leaves no row and nothing is marked', async () => {
    const { prompter, write, drawn, screen } = terminal();
    const answer = prompter.pickMany('Keys:', choicesOf(['alpha', 'beta']));
    await drawn((s) => s.includes('alpha'));
    write('zz\r');
    await drawn((s) => s.includes('No results found'));
    write(`${BACKSPACE}${BACKSPACE}bet\r`);
    expect(await answer).toEqual([1]);
    expect(screen().split('\n').at(-1)).toBe('✔ Keys: beta');
  });
});
