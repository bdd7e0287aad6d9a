import stringWidth from 'string-width';
import { sanitize } from './text.js';

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * Terminal columns `text` takes, by the measure cli-table3 pads with
 * (string-width 4: East Asian wide characters and emoji count two), so the
 * widths the renderer fixes are the widths the table draws. Most of what a
 * table holds is ASCII, which needs no lookup.
 */
export function displayWidth(text: string): number {
  return PRINTABLE_ASCII.test(text) ? text.length : stringWidth(text);
}

/**
 * `text` sanitised and cut with … to at most `max` columns, with its width.
 * It is cut on the raw text, one character at a time, so an escape stays
 * whole or goes whole; the result is then measured as a whole, since an
 * emoji sequence cut short can measure wider than its parts did.
 */
export function fit(text: string, max: number): { text: string; width: number } {
  const shown = sanitize(text);
  const width = displayWidth(shown);
  if (width <= max) return { text: shown, width };
  if (max < 1) return { text: '', width: 0 };
  const pieces: string[] = [];
  let used = 0;
  for (const char of text) {
    const piece = sanitize(char);
    const size = displayWidth(piece);
    if (used + size > max - 1) break;
    pieces.push(piece);
    used += size;
  }
  for (;;) {
    const cut = `${pieces.join('')}…`;
    const cutWidth = displayWidth(cut);
    if (cutWidth <= max || pieces.length === 0) return { text: cut, width: cutWidth };
    pieces.pop();
  }
}
