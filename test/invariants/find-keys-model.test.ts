// tier: in-process
/**
 * The finder (src/cli/domain/find-keys.ts) over random text: every key
 * planted, plain or with any of its characters JSON-escaped or
 * percent-encoded, is found once at its line and column, and nothing else
 * is; a key split across lines, or glued to a letter or digit, is not. The
 * same holds whatever pieces a stream comes in and wherever a piece is cut
 * inside a long line (sources/stream.ts). fast-check prints the seed and
 * the smallest failing case it finds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findKeys, type FoundKey } from '../../src/cli/domain/find-keys.js';
import { scanBytes, scanStream } from '../../src/cli/sources/stream.js';

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** Noise that comes close: the prefix's letters, escapes' characters, and short runs that look like keys. */
const NOISE = [' ', ' ', '=', '"', ':', '/', '-', '.', 's', 'k', '_', '%', '\\', 'u', '0', '5', 'f', 'sk_', 'sk', '%5F', '\\u005f', 'x', 'é', '\t'];

type Form = 'plain' | 'json' | 'percent';
interface Planted {
  key: string;
  forms: Form[];
}

const key = fc.array(fc.constantFrom(...ALNUM), { minLength: 64, maxLength: 64 }).map((body) => `sk_${body.join('')}`);
const plantedAs = (forms: Form[]): fc.Arbitrary<Planted> => key.chain((k) => fc.record({ key: fc.constant(k), forms: fc.array(fc.constantFrom<Form>(...forms), { minLength: k.length, maxLength: k.length }) }));
const noiseOf = (parts: string[]) => fc.array(fc.constantFrom(...parts), { maxLength: 12 }).map((chosen) => chosen.join(''));

function written({ key, forms }: Planted): string {
  return [...key]
    .map((char, i) => {
      const hex = char.charCodeAt(0).toString(16).padStart(4, '0');
      return forms[i] === 'json' ? `\\u${hex}` : forms[i] === 'percent' ? `%${hex.slice(2).toUpperCase()}` : char;
    })
    .join('');
}

/** A line: noise, then a planted key, two of them, or a decoy that must not be found, then noise; the decoys are a key glued to a word and a key cut in two by a newline. */
/** What may end just before a key: a separator, or an escape a log writes for one (a colour, a JSON \\n, a percent-escaped newline). */
const SEPARATORS = [' ', ' ', '=', '"', '\x1b[31m', '\\u001b[0;32m', '\\n', '\\t', '%0A', '%20'];
const lineOf = (planted: fc.Arbitrary<Planted>, noise: fc.Arbitrary<string>) => fc.record({ separator: fc.constantFrom(...SEPARATORS), before: noise, what: fc.oneof(planted.map((p) => ({ kind: 'key' as const, p })), fc.tuple(planted, planted, noise).map(([p, q, gap]) => ({ kind: 'pair' as const, p, q, gap })), planted.map((p) => ({ kind: 'glued' as const, p })), planted.map((p) => ({ kind: 'split' as const, p })), fc.constant({ kind: 'none' as const })), after: noise });

interface Case {
  text: string;
  expected: { key: string; line: number; column: number }[];
}

const textOf = (planted: fc.Arbitrary<Planted>, noise: fc.Arbitrary<string>): fc.Arbitrary<Case> => fc.array(lineOf(planted, noise), { maxLength: 30 }).map((lines) => {
  const out: string[] = [];
  const expected: Case['expected'] = [];
  for (const { separator, before, what, after } of lines) {
    const lead = `${before} ${separator}`;
    if (what.kind === 'key') {
      expected.push({ key: what.p.key, line: out.length + 1, column: [...lead].length + 1 });
      out.push(`${lead}${written(what.p)} ${after}`);
    } else if (what.kind === 'pair') {
      const between = ` ${what.gap} `;
      const first = written(what.p);
      expected.push({ key: what.p.key, line: out.length + 1, column: [...lead].length + 1 });
      expected.push({ key: what.q.key, line: out.length + 1, column: [...`${lead}${first}${between}`].length + 1 });
      out.push(`${lead}${first}${between}${written(what.q)} ${after}`);
    } else if (what.kind === 'glued') out.push(`${lead}a${what.p.key}${after}`);
    else if (what.kind === 'split') {
      out.push(`${lead}${what.p.key.slice(0, 40)}`);
      out.push(`${what.p.key.slice(40)} ${after}`);
    } else out.push(`${before}${after}`);
  }
  return { text: out.join('\n'), expected };
});
const text = textOf(plantedAs(['plain', 'plain', 'plain', 'json', 'percent']), noiseOf(NOISE));
/** No escape anywhere: the bytes are searched only at the runs a key's body could be (plainKeyStarts). */
const plainText = textOf(plantedAs(['plain']), noiseOf(NOISE.filter((n) => !n.includes('%') && !n.includes('\\'))));

const seen = (found: FoundKey[]) => found.map((f) => ({ key: f.key, line: f.line, column: f.column }));
const latin1 = (utf8: string) => Buffer.from(utf8, 'utf8');

describe('the finder over random text', () => {
  it.each([
    ['whatever its escapes', text],
    ['in text with no escape', plainText],
  ])('finds every key planted, %s, once, at its line and column, and nothing else', (_, cases) => {
    fc.assert(
      fc.property(cases, ({ text, expected }) => {
        const found: FoundKey[] = [];
        scanBytes(latin1(text), (f) => found.push(f));
        expect(seen(found)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('finds the same in a stream, whatever pieces it comes in and wherever a long line is cut', async () => {
    await fc.assert(
      fc.asyncProperty(text, fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 20 }), fc.integer({ min: 1024, max: 4096 }), async ({ text, expected }, cuts, piece) => {
        // Long lines: the text again and again on one line, so that the stream must cut inside it.
        const long = `${text.replaceAll('\n', ' | ')} `.repeat(Math.ceil((3 * piece) / Math.max(1, text.length + 1)));
        const whole = `${text}\n${long}\n${text}`;
        const bytes = latin1(whole);
        const chunks: Buffer[] = [];
        for (let at = 0, i = 0; at < bytes.length; i++) {
          const size = cuts[i % cuts.length]!;
          chunks.push(bytes.subarray(at, at + size));
          at += size;
        }
        const fromStream: FoundKey[] = [];
        await scanStream(
          (async function* () {
            yield* chunks;
          })(),
          (f) => fromStream.push(f),
          piece,
        );
        const fromWhole: FoundKey[] = [];
        scanBytes(bytes, (f) => fromWhole.push(f));
        expect(seen(fromStream)).toEqual(seen(fromWhole));
        expect(fromWhole.filter((f) => f.line <= text.split('\n').length).map((f) => f.key)).toEqual(expected.map((e) => e.key));
      }),
      { numRuns: 80 },
    );
  });

  it('never shows 16 characters in a row of any key in the text around a finding, the key found or its neighbours, whole or cut by the window', () => {
    fc.assert(
      fc.property(text, ({ text, expected }) => {
        const pieces = expected.flatMap((e) => Array.from({ length: 64 - 16 + 1 }, (_, i) => e.key.slice(3 + i, 3 + i + 16)));
        for (const found of findKeys(latin1(text).toString('latin1'))) for (const piece of pieces) expect(found.context).not.toContain(piece);
      }),
      { numRuns: 200 },
    );
  });
});
