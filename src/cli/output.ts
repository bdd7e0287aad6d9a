import { Chalk, type ChalkInstance } from 'chalk';
import type { IO } from './io.js';

export function styleFor(enabled: boolean): ChalkInstance {
  return new Chalk({ level: enabled ? 1 : 0 });
}

/** Everything that is not data goes to stderr; `--quiet` silences all but warnings. */
export class Messages {
  readonly style: ChalkInstance;

  constructor(
    private readonly io: IO,
    private readonly quiet = false,
  ) {
    this.style = styleFor(io.colorStderr);
  }

  info(text: string): void {
    if (!this.quiet) this.io.stderr.write(`${this.fit(text)}\n`);
  }

  success(text: string): void {
    if (!this.quiet) this.io.stderr.write(`${this.fit(`${this.style.green('✓')} ${text}`)}\n`);
  }

  /** One line rewritten in place on a terminal: countdowns. */
  progress(text: string): void {
    if (!this.quiet && this.io.stderrIsTTY) this.io.stderr.write(`\r\x1b[2K${text}`);
  }

  clearProgress(): void {
    if (!this.quiet && this.io.stderrIsTTY) this.io.stderr.write('\r\x1b[2K');
  }

  warn(text: string): void {
    this.io.stderr.write(`${this.fit(`${this.style.yellow('!')} ${text}`)}\n`);
  }

  /** On a terminal, long lines break between words rather than wherever the edge falls. */
  private fit(text: string): string {
    return this.io.stderrIsTTY ? wrap(text, this.io.columns) : text;
  }
}

/**
 * Lines longer than `width` broken at spaces, the rest of each indented by
 * two; a word longer than a line stays whole. Colour codes take no room.
 */
export function wrap(text: string, width: number): string {
  return text
    .split('\n')
    .map((line) => {
      if (visibleWidth(line) <= width) return line;
      const out: string[] = [];
      let current = '';
      for (const word of line.match(/\s*\S+/g) ?? []) {
        if (current !== '' && visibleWidth(current + word) > width) {
          out.push(current);
          current = `  ${word.trimStart()}`;
        } else {
          current += word;
        }
      }
      out.push(current);
      return out.join('\n');
    })
    .join('\n');
}

/**
 * Control characters (escape sequences included) as visible escapes, so
 * server text cannot move the cursor, clear the screen or write the
 * clipboard (docs/contract.md §C3). Tabs and newlines stay.
 */
export function escapeControls(text: string): string {
  return text.replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

const MAX_SHOWN = 200;

/**
 * Server text as a person sees it on one line: every control character
 * escaped (a newline in a name could forge a line of svc's own), and cut
 * with … past 200 characters.
 */
export function visible(text: string): string {
  const chars = [...text];
  const shown = chars.length > MAX_SHOWN ? `${chars.slice(0, MAX_SHOWN - 1).join('')}…` : text;
  return escapeControls(shown).replace(/[\t\n]/g, (c) => (c === '\t' ? '\\t' : '\\n'));
}

export function printJson(io: IO, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export interface Column<T> {
  header: string;
  /** For people: may be coloured or relative. */
  human: (row: T, style: ChalkInstance) => string;
  /** For scripts when piped: stable, no colour, no tabs or newlines. */
  plain: (row: T) => string;
  /** Columns with a rank are left out, lowest rank first, until the table fits the terminal. */
  dropRank?: number;
}

/** Columns of a terminal table are this far apart. */
const GAP = '  ';

/**
 * A table on a TTY; tab-separated rows under a header line when piped.
 * Each cell is rendered and measured once, then the least useful columns
 * are left out until the rest fit the terminal: one pass, however many rows
 * (cli-table3, which the first version used, lays out every cell against
 * every other: 9 s for 5,000 keys).
 */
export function printRows<T>(io: IO, columns: Column<T>[], rows: T[]): void {
  if (!io.stdoutIsTTY) {
    const clean = (s: string) => s.replace(/[\t\r\n]+/g, ' ');
    const lines = [columns.map((c) => c.header), ...rows.map((r) => columns.map((c) => clean(c.plain(r))))];
    io.stdout.write(lines.map((cells) => cells.join('\t')).join('\n') + '\n');
    return;
  }
  const style = styleFor(io.colorStdout);
  const table = columns.map((c) => {
    const cells = [style.bold(c.header), ...rows.map((r) => c.human(r, style))];
    const widths = cells.map(visibleWidth);
    return { column: c, cells, widths, width: widths.reduce((a, b) => Math.max(a, b), 0) };
  });
  const droppable = table.filter((t) => t.column.dropRank !== undefined).sort((a, b) => a.column.dropRank! - b.column.dropRank!);
  let shown = table;
  const fullWidth = () => shown.reduce((sum, t) => sum + t.width, 0) + GAP.length * (shown.length - 1);
  while (droppable.length > 0 && fullWidth() > io.columns) {
    const drop = droppable.shift();
    shown = shown.filter((t) => t !== drop);
  }
  const lines: string[] = [];
  for (let row = 0; row <= rows.length; row++) {
    let line = '';
    shown.forEach((t, i) => {
      line += i === shown.length - 1 ? t.cells[row]! : t.cells[row]! + ' '.repeat(t.width - t.widths[row]!) + GAP;
    });
    lines.push(line.trimEnd());
  }
  io.stdout.write(`${lines.join('\n')}\n`);
}

function visibleWidth(text: string): number {
  let width = 0;
  for (const _ of text.replace(/\x1b\[[0-9;]*m/g, '')) width++;
  return width;
}

const UNITS: [number, string][] = [
  [365 * 86_400, 'year'],
  [30 * 86_400, 'month'],
  [7 * 86_400, 'week'],
  [86_400, 'day'],
  [3_600, 'hour'],
  [60, 'minute'],
  [1, 'second'],
];

/** "3 minutes ago", "in 29 days", "just now"; `at` is an ISO time or epoch milliseconds. */
export function relativeTime(at: string | number, nowMs: number): string {
  const deltaSeconds = Math.round(((typeof at === 'number' ? at : Date.parse(at)) - nowMs) / 1000);
  const abs = Math.abs(deltaSeconds);
  if (abs < 5) return 'just now';
  let index = UNITS.findIndex(([s]) => abs >= s);
  // Rounded, so a 90-day key seen a minute later still reads "in 3 months";
  // a count that rounds up to the next unit ("60 minutes") is said in that unit.
  if (index > 0 && Math.round(abs / UNITS[index]![0]) * UNITS[index]![0] >= UNITS[index - 1]![0]) index--;
  const [size, unit] = UNITS[index]!;
  const n = Math.round(abs / size);
  const phrase = `${n} ${unit}${n === 1 ? '' : 's'}`;
  return deltaSeconds < 0 ? `${phrase} ago` : `in ${phrase}`;
}
