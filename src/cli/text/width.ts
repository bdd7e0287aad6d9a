import stringWidth from 'string-width';
import { sanitize } from './text.js';

/** Printable ASCII and the … svc cuts and hints with: one column each for string-width too, none of them emoji. */
const ONE_COLUMN_EACH = /^[\x20-\x7e\u2026]*$/;

/**
 * Terminal columns `text` takes, by string-width 4's measure (East Asian
 * wide characters and emoji count two), which is cli-table3's: the widths
 * the renderer fixes are the widths the table draws. The bundle gives
 * cli-table3 this function in its place (scripts/table-plugins.mjs). Most
 * of what a table holds needs no lookup.
 */
export function displayWidth(text: string): number {
  return ONE_COLUMN_EACH.test(text) ? text.length : stringWidth(text);
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
