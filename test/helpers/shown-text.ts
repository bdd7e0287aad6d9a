/**
 * What a terminal shows of `text` written from its top left corner, after
 * the cursor moves the interactive manager's region makes to clear what it
 * drew (render/region.ts): carriage return, up, down and erase line. An
 * in-process test reads the manager's stderr through it to count what the
 * person sees once, not what was written and then taken back.
 */
export function shownText(text: string): string {
  const lines: string[] = [''];
  let row = 0;
  let column = 0;
  const reach = (to: number) => {
    while (lines.length <= to) lines.push('');
  };
  for (const [token, count, final] of text.matchAll(/\x1b\[(\d*)([ABK])|\r|\n|\x1b|[^\x1b\r\n]+/g)) {
    if (final === 'A') row = Math.max(0, row - (Number(count) || 1));
    else if (final === 'B') reach((row += Number(count) || 1));
    else if (final === 'K') lines[row] = count === '2' ? '' : lines[row]!.slice(0, column);
    else if (token === '\r') column = 0;
    else if (token === '\n') {
      reach(++row);
      column = 0;
    } else {
      const line = lines[row]!.padEnd(column);
      lines[row] = line.slice(0, column) + token + line.slice(column + token.length);
      column += token.length;
    }
  }
  return lines.join('\n').replace(/\n+$/, '');
}
