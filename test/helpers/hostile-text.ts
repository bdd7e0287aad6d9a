/**
 * Strings built to get past the renderer (src/cli/terminal/renderer.ts): escape
 * sequences, every kind of control, bidi overrides, line separators, lone
 * surrogates, wide characters, combining marks and backslashes that look
 * like escapes, mixed with arbitrary code points.
 *
 * The properties that use them run twice, as test/abuse/fuzz.test.ts does:
 * a pinned seed, so `npm test` sees the same inputs every time, and a fresh
 * one, printed, so every run also tries something new; SVC_FUZZ_SEED=<n>
 * replays a fresh seed.
 */
import fc from 'fast-check';

const PINNED_SEED = 1_610_612_741;
const freshSeed = process.env.SVC_FUZZ_SEED ? Number(process.env.SVC_FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
if (!Number.isSafeInteger(freshSeed)) throw new Error(`SVC_FUZZ_SEED must be an integer, not ${process.env.SVC_FUZZ_SEED}`);
export const SEEDS = [
  { pass: 'pinned', seed: PINNED_SEED },
  { pass: 'fresh', seed: freshSeed },
];
export const freshSeedNote = (file: string) => `fresh seed ${freshSeed} this run; replay it with SVC_FUZZ_SEED=${freshSeed} npx vitest run ${file}`;

const char = (from: number, to: number) => fc.integer({ min: from, max: to }).map((code) => String.fromCharCode(code));

/** Characters a terminal draws as nothing, or as a blank it also draws for other text (docs/contract.md §C3). */
export const INVISIBLE = ['\u200b', '\u200c', '\u200d', '\u2060', '\u2064', '\ufeff', '\u00ad', '\u034f', '\u115f', '\u1160', '\u3164', '\uffa0', '\u180e', '\ufe0f', '\u{e0001}', '\u{e0041}', '\u{e007f}', '\u{e0100}', '\u{e01ef}'];
const INVISIBLE_RANGES: [number, number][] = [
  [0x200b, 0x200f],
  [0x2060, 0x206f],
  [0xfe00, 0xfe0f],
  [0xfff0, 0xfffb],
  [0x1d173, 0x1d17a],
  [0xe0000, 0xe0fff],
];

export const hostileChar: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  fc.constantFrom('\x1b', '\x9b', '\x07', '\t', '\n', '\r', '\x7f', '\x85', '\u061c', '\u200e', '\u202e', '\u2066', '\u2069', '\u2028', '\u2029'),
  fc.constantFrom('\\', 'x', '1b', 'u202e', '[', ']', ';', '2J', 'm', ' ', '  ', '…'),
  fc.constantFrom('日', '本', '語', '😀', '👩‍💻', '❤️', 'e\u0301', '\u3000', '\u00a0'),
  fc.constantFrom(...INVISIBLE),
  fc.constantFrom(...INVISIBLE_RANGES).chain(([from, to]) => fc.integer({ min: from, max: to }).map((code) => String.fromCodePoint(code))),
  char(0x00, 0x9f),
  char(0xd800, 0xdfff),
);

export const hostileString = fc.string({ unit: hostileChar, maxLength: 40 });

/** What nothing the renderer writes may hold, but for its own newlines and colour codes. */
export const UNSAFE_OUTPUT =
  /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\u00ad\u034f\u115f\u1160\u180e\u200b-\u200d\u2060-\u2064\u3164\ufe00-\ufe0f\ufeff\uffa0\u{e0000}-\u{e007f}\u{e0100}-\u{e01ef}\p{Default_Ignorable_Code_Point}\p{Cs}]/u;

/** The colour codes chalk writes, and nothing else that starts with ESC. */
export const stripColour = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, '');
