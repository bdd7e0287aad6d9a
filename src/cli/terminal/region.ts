import { EventEmitter } from 'node:events';
import type { IO } from './io.js';
import { displayWidth } from '../text/width.js';

/** What a region holds that is said again once it is cleared: the renderer's messages, and its data unless dropped. */
interface Kept {
  text: string;
  data: boolean;
}

/**
 * A part of the terminal that can be taken back: the interactive manager
 * draws a screen in one, and an action's questions and answers in the next,
 * so that the terminal (and its scrollback) holds one copy of the screen
 * however many actions ran, not one per action.
 *
 * Everything drawn through `io` (the renderer's messages, tables and data,
 * the prompts) is followed by a model of the cursor: lines and their
 * widths, as the terminal holds them. Clearing moves the cursor back to
 * where the region began and erases its rows. The rows a line takes are
 * counted at the terminal's width when clearing, as a terminal that
 * rewraps its lines on a resize (tmux, VTE, iTerm2, kitty, Windows
 * Terminal) shows them. A region that has grown taller than the terminal
 * has its top in the scrollback, where no escape reaches: one that keeps
 * what was said in it is left as it is, whole, rather than half erased; a
 * screen, which keeps nothing, is erased as far as it is still on the
 * terminal (a terminal made shorter pushed its top away).
 *
 * What the renderer said in a region started with `keep` (what an action
 * did, a failure) is written again above the next one, so nothing said is
 * lost with the screen it was said on; data (a new key's secret) only
 * while `dropData` is not given. Data dropped from a region that may have
 * reached the scrollback (taller than the terminal, or the terminal
 * resized meanwhile, which may rewrap and push rows there) is not left
 * there: the screen and the scrollback are cleared whole.
 */
export class Region {
  readonly #terminal: IO;
  /** The terminal as the manager draws on it: stdout is its stderr, and every write is followed. */
  readonly io: IO;
  #lines = new Lines();
  #keeping = false;
  #kept: Kept[] = [];
  /** The terminal's size changed since the region began: a terminal may then have moved some of it into its scrollback. */
  #resized = false;
  /** What earlier regions left on the terminal (what they said, and data left on screen), written again after a clear of the scrollback. */
  #earlier: string[] = [];

  constructor(terminal: IO) {
    this.#terminal = terminal;
    // Lives as long as the manager, which is the process: nothing to unsubscribe.
    terminal.onResize?.(() => (this.#resized = true));
    const followed = (data: boolean) => new FollowedStream(terminal.stderr, () => this.#size().columns, (text) => this.#feed(text, data));
    // The terminal stays the prototype, so its size is read live after a resize.
    this.io = Object.create(terminal, {
      stdout: { value: followed(true) },
      stderr: { value: followed(false) },
      stdoutIsTTY: { value: terminal.stderrIsTTY },
      colorStdout: { value: terminal.colorStderr },
      said: { value: (message: string) => this.#keep(message, false) },
    }) as IO;
  }

  /** Whether data was drawn in the region since it began (a new key's secret, or the answer holding it). */
  get holdsData(): boolean {
    return this.#kept.some((k) => k.data);
  }

  /** A new region begins at the cursor; `keep`: what is said in it is said again when it is cleared. */
  start(keep: boolean): void {
    this.#lines = new Lines();
    this.#keeping = keep;
    this.#kept = [];
    this.#resized = false;
  }

  /**
   * Erases the region, when it is all still on the screen, then writes
   * again what it kept (without the data when `dropData`); the next region,
   * one that keeps nothing until started otherwise, begins after it.
   */
  clear(options: { dropData?: boolean } = {}): void {
    const { columns, rows } = this.#size();
    const kept = this.#kept;
    const again = kept.filter((k) => !(k.data && options.dropData)).map((k) => k.text);
    const taller = this.#lines.peak(columns) > rows;
    if (!this.#terminal.stderrIsTTY) {
      // Nothing to erase: what was written went to no screen.
    } else if (options.dropData && this.holdsData && (taller || this.#resized)) {
      // Data (a secret) that may have left the screen is in the scrollback, where erasing rows cannot reach: the
      // screen and the scrollback are cleared whole (ED 2, then ED 3, which tmux, xterm, VTE, iTerm2, kitty and
      // Windows Terminal honour; tmux's ED 2 moves the screen into the scrollback first), and what was said is
      // written again.
      this.#terminal.stderr.write(`\x1b[H\x1b[2J\x1b[3J${[...this.#earlier, ...again].join('')}`);
    } else if (!taller || !this.#keeping) {
      // Moving up past the top row stops there, where the rest of a screen whose top was pushed away begins.
      const up = this.#lines.rowsAbove(columns);
      this.#terminal.stderr.write(`\r${cursorUp(up)}${eraseRows(this.#lines.rows(columns))}${again.join('')}`);
    }
    this.#earlier.push(...again);
    this.start(false);
  }

  /** Ends the region where it is, erasing nothing: what is on screen stays (a secret not yet acknowledged). */
  leave(): void {
    this.#earlier.push(...this.#kept.map((k) => k.text));
    this.start(false);
  }

  /**
   * The terminal's size as the terminal has it now: asked of it where it can
   * be, since a resize is told by a signal that a key pressed just after it
   * may overtake; else as the IO says.
   */
  #size(): { columns: number; rows: number } {
    const asked = (this.#terminal.stderr as { getWindowSize?: () => [number, number] }).getWindowSize?.();
    if (asked && asked[0] > 0 && asked[1] > 0) return { columns: asked[0], rows: asked[1] };
    return { columns: this.#terminal.columns, rows: this.#terminal.rows };
  }

  #feed(text: string, data: boolean): void {
    this.#lines.feed(text, this.#size().columns);
    if (data) this.#keep(text, true);
  }

  #keep(text: string, data: boolean): void {
    if (this.#keeping) this.#kept.push({ text, data });
  }
}

/** A control sequence, a string command (OSC and the like), a lone escape, a control character, or printable text. */
const TOKEN = /\x1b\[([0-9;?]*)[ -/]*([@-~])|\x1b[\]PX^_][\s\S]*?(?:\x07|\x1b\\)|\x1b[\s\S]?|[\x00-\x1f\x7f]|[^\x00-\x1f\x7f]+/g;

/**
 * The lines drawn since a region began, each as wide as what was written on
 * it, and the cursor: a line index and a column within that line (past
 * the terminal's width when the line wrapped).
 */
class Lines {
  #widths: number[] = [0];
  #line = 0;
  #column = 0;
  #peak = 0;

  feed(text: string, columns: number): void {
    for (const [token, params = '', final] of text.matchAll(TOKEN)) {
      if (final !== undefined) this.#control(final, params, columns);
      else if (token === '\n') this.#moveTo(this.#line + 1, 0);
      else if (token === '\r') this.#column = this.#rowStart(columns);
      else if (token === '\b') this.#column = Math.max(this.#rowStart(columns), this.#column - 1);
      else if (!token.startsWith('\x1b') && !/^[\x00-\x1f\x7f]$/.test(token)) {
        this.#column += displayWidth(token);
        this.#widths[this.#line] = Math.max(this.#widths[this.#line]!, this.#column);
      }
    }
    this.#peak = Math.max(this.#peak, this.rows(columns));
  }

  /** The most rows the region has taken at once. */
  peak(columns: number): number {
    return Math.max(this.#peak, this.rows(columns));
  }

  rows(columns: number): number {
    return this.#widths.reduce((sum, width) => sum + rowsOf(width, columns), 0);
  }

  /** Rows between the region's first and the cursor's. */
  rowsAbove(columns: number): number {
    let rows = 0;
    for (let i = 0; i < this.#line; i++) rows += rowsOf(this.#widths[i]!, columns);
    return rows + this.#rowInLine(columns);
  }

  #control(final: string, params: string, columns: number): void {
    if (params.startsWith('?')) return;
    const n = Number(params.split(';')[0]) || 1;
    const start = this.#rowStart(columns);
    switch (final) {
      case 'A':
        return this.#moveRows(-n, columns);
      case 'B':
        return this.#moveRows(n, columns);
      case 'C':
        this.#column += n;
        return;
      case 'D':
        this.#column = Math.max(start, this.#column - n);
        return;
      case 'G':
        this.#column = start + n - 1;
        return;
      case 'K':
        if (params === '' || params === '0') this.#widths[this.#line] = Math.min(this.#widths[this.#line]!, this.#column);
        else if (params === '2') this.#widths[this.#line] = Math.min(this.#widths[this.#line]!, start);
        return;
      case 'J':
        if (params === '' || params === '0') {
          this.#widths[this.#line] = Math.min(this.#widths[this.#line]!, this.#column);
          this.#widths.length = this.#line + 1;
        }
        return;
      default:
    }
  }

  /** Up (negative) or down by terminal rows, keeping the column on the row: a line that wrapped is several rows. */
  #moveRows(by: number, columns: number): void {
    const within = this.#column - this.#rowStart(columns);
    let target = Math.max(0, this.rowsAbove(columns) + by);
    let line = 0;
    while (line < this.#widths.length && target >= rowsOf(this.#widths[line]!, columns)) {
      target -= rowsOf(this.#widths[line]!, columns);
      line++;
    }
    if (line >= this.#widths.length) {
      this.#moveTo(line + target, within);
      return;
    }
    this.#line = line;
    this.#column = target * columns + within;
  }

  #moveTo(line: number, column: number): void {
    while (this.#widths.length <= line) this.#widths.push(0);
    this.#line = line;
    this.#column = column;
  }

  /** The row of its line the cursor is on: a cursor just past the last column is still on that row. */
  #rowInLine(columns: number): number {
    return this.#column === 0 ? 0 : Math.floor((this.#column - 1) / columns);
  }

  #rowStart(columns: number): number {
    return this.#rowInLine(columns) * columns;
  }
}

function cursorUp(rows: number): string {
  return rows > 0 ? `\x1b[${rows}A` : '';
}

/**
 * Erases `rows` rows from the cursor's down, row by row, and comes back.
 * Not "erase below" (ED): at the top left corner tmux takes that for a
 * clear screen and moves what it erases into the scrollback.
 */
function eraseRows(rows: number): string {
  return `${'\x1b[2K\x1b[1B'.repeat(rows - 1)}\x1b[2K${cursorUp(rows - 1)}`;
}

function rowsOf(width: number, columns: number): number {
  return Math.max(1, Math.ceil(width / columns));
}

/**
 * Writes on to the terminal's stream, telling the region first. A plain
 * emitter, not a stream: what pipes into it (inquirer's output) must not end
 * it, as it would not end the terminal's own stream.
 */
class FollowedStream extends EventEmitter {
  readonly writable = true;
  /** Node's pipe leaves a destination so marked open when its source ends, as it leaves stdout and stderr. */
  readonly _isStdio = true;
  readonly #target: NodeJS.WritableStream;
  readonly #columns: () => number;
  readonly #follow: (text: string) => void;

  constructor(target: NodeJS.WritableStream, columns: () => number, follow: (text: string) => void) {
    super();
    this.#target = target;
    this.#columns = columns;
    this.#follow = follow;
  }

  get columns(): number {
    return this.#columns();
  }

  get isTTY(): boolean {
    return (this.#target as { isTTY?: boolean }).isTTY === true;
  }

  write(chunk: string | Uint8Array, encoding?: BufferEncoding | ((error?: Error | null) => void), done?: (error?: Error | null) => void): boolean {
    this.#follow(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return this.#target.write(chunk as string, encoding as BufferEncoding, done);
  }

  end(): this {
    return this;
  }
}
