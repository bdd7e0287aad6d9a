export type Tone = 'bold' | 'dim' | 'green' | 'yellow' | 'red' | 'cyan';
export type Segment = string | { text: string; tone: Tone };
/** One line of output: a string or segments; never contains svc's own newline. */
export type Line = Segment | readonly Segment[];

export function tone(text: string, tone: Tone): Segment {
  return { text, tone };
}

const UNSAFE = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const NAMED: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

export function sanitize(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return NAMED[c] ?? (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`);
  });
}

export function clip(text: string, max: number): string {
  const chars = [...sanitize(text)];
  return chars.length <= max ? chars.join('') : `${chars.slice(0, max - 1).join('')}…`;
}

export function jsonDocument(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(/[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
