/**
 * Keys in bytes that come in pieces (standard input, a file too large to
 * hold whole): each piece searched with what was left of the last one, so
 * that memory is bounded by a piece, not by the stream. A piece is cut
 * after its last newline, which no key crosses; on a line longer than
 * half a piece, the last LONGEST_KEY_TEXT bytes are searched again with
 * the next piece, and a key starting there is taken from that search.
 */
import { columnsOf, findKeys, LONGEST_KEY_TEXT, mayHoldEscapes, mayHoldKey, newlinesBetween, plainKeyStarts } from '../domain/find-keys.js';
import type { OnFound } from './places.js';

/**
 * Whole bytes: a file or blob read at once. Where no escape could be in
 * them, only the lines that hold a plain key (plainKeyStarts) are made
 * text and searched.
 */
export function scanBytes(bytes: Buffer, onFound: OnFound): void {
  if (!mayHoldKey(bytes)) return;
  if (mayHoldEscapes(bytes)) {
    for (const found of findKeys(bytes.toString('latin1'))) onFound(found);
    return;
  }
  let line = 1;
  let counted = 0;
  let searchedTo = -1;
  for (const at of plainKeyStarts(bytes)) {
    if (at < searchedTo) continue;
    const start = bytes.lastIndexOf(10, at) + 1;
    const newline = bytes.indexOf(10, at);
    const end = newline === -1 ? bytes.length : newline;
    for (let nl = bytes.indexOf(10, counted); nl !== -1 && nl < start; nl = bytes.indexOf(10, nl + 1)) line++;
    counted = start;
    for (const found of findKeys(bytes.toString('latin1', start, end), line)) onFound(found);
    searchedTo = end;
  }
}

const PIECE = 1024 * 1024;
/** Longer than any escape that may stand before a key (`\\u001b[38;5;208m`): kept before a cut. */
const KEPT_BEFORE = 32;

/** Searches `chunks` as they come; resolves with the bytes read. `piece`: the size searched at once (tests make it small to cut lines often). */
export async function scanStream(chunks: AsyncIterable<Buffer | string>, onFound: OnFound, piece = PIECE): Promise<number> {
  let pending = '';
  let line = 1;
  // Columns of pending's first line before pending, when a piece was cut inside that line.
  let column = 0;
  // Characters of `pending` searched already: the one kept before a cut inside a line.
  let from = 0;
  let bytes = 0;
  // The text is made already: the expression is its own quickest look, where a Buffer's would copy it back first.
  const search = (text: string, before = Infinity) => {
    for (const found of findKeys(text, line, from, column)) if (found.offset < before) onFound(found);
  };
  for await (const chunk of chunks) {
    const part = typeof chunk === 'string' ? chunk : chunk.toString('latin1');
    bytes += part.length;
    const text = pending + part;
    if (text.length < piece) {
      pending = text;
      continue;
    }
    const newline = text.lastIndexOf('\n');
    if (newline !== -1 && text.length - newline < piece / 2) {
      const head = text.slice(0, newline + 1);
      search(head);
      line += newlinesBetween(head, 0, head.length);
      pending = text.slice(newline + 1);
      from = 0;
      column = 0;
      continue;
    }
    const cut = text.length - LONGEST_KEY_TEXT;
    search(text, cut);
    // What is before the cut stays too, so that a key just after it is still told from one inside a word or after an escape.
    let kept = cut - KEPT_BEFORE;
    // Not inside a character's UTF-8 bytes: the columns counted on either side would each count half of it.
    while ((text.charCodeAt(kept) & 0xc0) === 0x80) kept--;
    line += newlinesBetween(text, 0, kept);
    const lastNewline = text.lastIndexOf('\n', kept - 1);
    column = lastNewline === -1 ? column + columnsOf(text.slice(0, kept)) : columnsOf(text.slice(lastNewline + 1, kept));
    pending = text.slice(kept);
    from = cut - kept;
  }
  search(pending);
  return bytes;
}
