import type { Chalk, ChalkInstance } from 'chalk';
import type Table from 'cli-table3';
import { OutputError } from '../errors/errors.js';
import type { IO } from './io.js';
import { compileQuery, QueryFailedError, type JsonLayout, type Query } from './query.js';
import { addMaskCommands, onGitHubActions } from './ci-masking.js';
import { jsonDocument, sanitize, type Line, type Segment, type Tone } from '../text/text.js';
import { displayWidth, fit } from '../text/width.js';

export interface Column<T> {
  header: string;
  /** For people, on a terminal: may be toned. */
  human: (row: T) => Segment;
  /** For scripts, when piped: stable and untoned. */
  plain: (row: T) => string;
  /** Columns with a rank are left out, lowest rank first, until the table fits the terminal. */
  dropRank?: number;
  /** Terminal columns a cell may take; longer ones are cut with …. */
  maxWidth?: number;
  /**
   * Narrower first, at this rank in the order columns are dropped (before a
   * column of the same rank): the column is cut to what fits, down to
   * `minWidth`, so that columns ranked above it stay.
   */
  shrink?: { rank: number; minWidth: number };
}

export interface Field {
  label: string;
  human: Line;
  plain: string;
}

/** A table whose rows come in batches: `end` once they are all in. */
export interface TableStream<T> {
  rows(rows: readonly T[]): void;
  end(): void;
}

/** Text already sanitised, with the tone it is to be painted in. */
interface Run {
  text: string;
  tone: Tone | undefined;
  /** What `text` was made from, for cutting it without halving an escape. */
  raw: string;
}

/** Columns of a terminal table are this far apart. */
const GAP = '  ';

/**
 * Rows per cli-table3 instance. cli-table3 checks every cell against every
 * cell above it for spans, so one instance for 5,000 rows takes seconds;
 * chunks of this size, all with the same fixed widths, keep that cost per
 * row constant.
 */
const CHUNK_ROWS = 50;

const BORDERLESS = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '',
  'mid-mid': '',
  right: '',
  'right-mid': '',
  middle: GAP,
};

/** cli-table3 colours nothing itself: every code in a table is the renderer's. */
const UNSTYLED = { 'padding-left': 0, 'padding-right': 0, head: [], border: [], compact: true };

/**
 * What only a terminal needs: chalk for a stream that gets colour,
 * cli-table3 for a table drawn on a terminal stdout (piped, a table is
 * tab-separated lines). createRenderer loads each only when the streams
 * need it, so a script's piped command starts without them.
 */
export interface TerminalLibraries {
  Chalk?: typeof Chalk;
  Table?: typeof Table;
  /** --query's expression, compiled (./query.ts). */
  query?: Query;
}

export interface RendererOptions {
  quiet: boolean;
  /** --query: the expression that picks what json() prints of each document. */
  query?: string;
}

/** A renderer for `io`, with what its streams need loaded; a --query the library cannot parse is a UsageError here, before the command does anything. */
export async function createRenderer(io: IO, options: RendererOptions): Promise<Renderer> {
  const [chalk, table, query] = await Promise.all([
    io.colorStdout || io.colorStderr ? import('chalk') : undefined,
    io.stdoutIsTTY ? import('cli-table3') : undefined,
    options.query === undefined ? undefined : compileQuery(options.query),
  ]);
  return new Renderer(io, options, { Chalk: chalk?.Chalk, Table: table?.default, query });
}

/**
 * Everything svc shows a person, through one door: each string is
 * sanitised (./text.ts) before any colour is added, and colour comes only
 * from here, so no caller can put an escape sequence on the terminal.
 * Data goes to stdout; messages, warnings and progress to stderr
 * (docs/contract.md §C3).
 */
export class Renderer {
  readonly #io: IO;
  readonly #quiet: boolean;
  /** Null on a stream without colour. */
  readonly #out: ChalkInstance | null;
  readonly #err: ChalkInstance | null;
  readonly #Table: typeof Table | undefined;
  readonly #query: Query | undefined;
  /** --query failed on a document json() then printed whole: the command ends with it once done (queryFailure). */
  #queryFailed: QueryFailedError | null = null;
  /** The secrets svc hands on (handingOn): each registered once with a CI's log masking, and none left out by --query. */
  readonly #handedOn = new Set<string>();
  /** A progress line is on screen: a message first clears it, and the next progress draws it again. */
  #progressShown = false;

  /** `libraries` must hold what `io`'s streams need (TerminalLibraries); createRenderer loads it. */
  constructor(io: IO, options: RendererOptions, libraries: TerminalLibraries) {
    this.#io = io;
    this.#quiet = options.quiet;
    const level = io.colorLevel ?? 1;
    const painter = (coloured: boolean) => {
      if (!coloured) return null;
      if (!libraries.Chalk) throw new Error('a renderer for a stream with colour needs chalk');
      return new libraries.Chalk({ level });
    };
    this.#out = painter(io.colorStdout);
    this.#err = painter(io.colorStderr);
    if (io.stdoutIsTTY && !libraries.Table) throw new Error('a renderer for a terminal needs cli-table3');
    this.#Table = libraries.Table;
    if (options.query !== undefined && !libraries.query) throw new Error('a renderer for --query needs the compiled expression');
    this.#query = libraries.query;
  }

  /** Terminal width, read at each use: a terminal can be resized while svc waits. */
  get columns(): number {
    return this.#io.columns;
  }

  /** Each argument is one line: a string, or segments (`info([a, tone(b, 'bold')])`). */
  info(...lines: Line[]): void {
    if (!this.#quiet) this.#message(null, lines);
  }

  success(...lines: Line[]): void {
    if (!this.#quiet) this.#message(run('✓', 'green'), lines);
  }

  /** What svc waits for a person to do (type text, then Ctrl-D): shown even with --quiet, as a question is. */
  awaiting(...lines: Line[]): void {
    this.#message(null, lines);
  }

  /** Shown even with --quiet. */
  warn(...lines: Line[]): void {
    this.#message(PREFIXES.warn, lines);
  }

  /** Shown even with --quiet. */
  failure(lines: readonly Line[]): void {
    this.#message(PREFIXES.failure, lines.length > 0 ? lines : ['']);
  }

  /**
   * One line rewritten in place (countdowns), on a terminal only. Cut to the
   * terminal's width: a line the terminal wrapped could not be rewritten.
   */
  progress(line: Line): void {
    if (!this.#quiet) this.#progressLine(line);
  }

  /**
   * A wait svc sleeps through before it tries again (a rate limit's
   * countdown): a progress line, on a terminal only, and even with --quiet,
   * since a terminal left silent that long looks hung. It is cleared as
   * any progress line is, so nothing of it stays on screen.
   */
  countdown(line: Line): void {
    this.#progressLine(line);
  }

  clearProgress(): void {
    if (!this.#io.stderrIsTTY || (this.#quiet && !this.#progressShown)) return;
    this.#io.stderr.write('\r\x1b[2K');
    this.#progressShown = false;
  }

  #progressLine(line: Line): void {
    if (!this.#io.stderrIsTTY) return;
    this.#io.stderr.write(`\r\x1b[2K${paint(cutRuns(runsOf(line), this.columns - 1), this.#err)}`);
    this.#progressShown = true;
  }

  /**
   * A command's document: with --query, what the expression picks of it
   * (./query.ts). An expression that cannot be applied to it prints the
   * document whole instead, so that nothing the command made (a new
   * secret) is lost, and the command still fails once done (queryFailure).
   * `line`: on one line, for a ready line a script reads with `read`.
   */
  json(value: unknown, layout: JsonLayout = 'document'): void {
    this.#io.stdout.write(`${this.#document(value, layout)}\n`);
  }

  /**
   * A failure's document (views/failure.ts), the server's answer inside
   * it: printed whole whatever --query asks, since an expression
   * written for the command's document would make null of it, and a
   * script would see no error but the exit code.
   */
  failureJson(value: unknown): void {
    this.#io.stdout.write(`${jsonDocument(value)}\n`);
  }

  /**
   * A secret svc is about to hand on (print it, write it to a file, give it
   * to a command or a child's environment). On GitHub Actions it is
   * registered with the runner's log masking first, so that no later line
   * of the job's log shows it, svc's or a later step's (./ci-masking.ts);
   * elsewhere nothing is said. On stderr, even with --quiet: stdout is data
   * (`KEY=$(svc keys create ci)` would take the line, and the runner would
   * never see it). Each secret once. And a document that holds it is never
   * cut by --query to one without it (#document): it is shown only this once.
   */
  handingOn(secret: string): void {
    if (this.#handedOn.has(secret)) return;
    this.#handedOn.add(secret);
    if (!onGitHubActions(this.#io.env)) return;
    const lines = addMaskCommands(secret);
    if (lines.length === 0) return;
    // The runner reads a command only at the start of a line.
    const clear = this.#progressShown ? '\r\x1b[2K' : '';
    this.#progressShown = false;
    this.#io.stderr.write(`${clear}${lines.join('\n')}\n`);
  }

  /** Why --query could not be applied to a document json() printed whole instead; null when it could, or was not given. */
  queryFailure(): QueryFailedError | null {
    return this.#queryFailed;
  }

  #document(value: unknown, layout: JsonLayout): string {
    const whole = jsonDocument(value, layout === 'line' ? 0 : 2);
    if (!this.#query) return whole;
    try {
      const picked = this.#query.print(whole, layout);
      const dropped = [...this.#handedOn].some((secret) => whole.includes(secret) && !picked.includes(secret));
      if (dropped) throw this.#query.droppedSecret();
      return picked;
    } catch (error) {
      if (!(error instanceof QueryFailedError)) throw error;
      this.#queryFailed ??= error;
      return whole;
    }
  }


  /**
   * Text for a person on stdout (a status block, a ping's answer): on a
   * terminal each line broken between words at its width, as messages are,
   * later parts indented by `indent` (under a label's value); piped, each
   * line whole, as a script reads it (`grep '^Key:'`).
   */
  text(lines: readonly Line[], indent = 2): void {
    if (lines.length === 0) return;
    const parts = lines.flatMap((line) => (this.#io.stdoutIsTTY ? wrap(runsOf(line), this.columns, indent) : [runsOf(line)]));
    this.#io.stdout.write(`${parts.map((part) => paint(part, this.#out)).join('\n')}\n`);
  }

  /** Data lines (a secret, a raw answer): never wrapped, so what is copied is what was sent. */
  lines(lines: readonly Line[]): void {
    if (lines.length === 0) return;
    this.#io.stdout.write(`${lines.map((line) => paint(runsOf(line), this.#out)).join('\n')}\n`);
  }

  /**
   * Resolves once everything written to stdout so far has been handed to
   * the system; throws OutputError when a write failed (a full disk). What
   * must not be lost (a new secret) is shown only once this resolves.
   */
  async written(): Promise<void> {
    const error = await (this.#io.stdoutWritten?.() ?? null);
    if (error) throw new OutputError(error);
  }

  /**
   * On a terminal, aligned columns, the least useful left out until the
   * table fits; piped, a header line then tab-separated rows of every
   * column's plain value, sanitised, so a tab or newline in a value cannot
   * forge a column or a row.
   */
  table<T>(columns: readonly Column<T>[], rows: readonly T[]): void {
    const table = this.tableStream(columns);
    table.rows(rows);
    table.end();
  }

  /**
   * A table drawn as its rows arrive (a list read page by page). Piped, each
   * batch is written as it comes. On a terminal the first batch decides
   * which columns fit and how wide each is; a later cell wider than its
   * column is cut with …, so what is on screen never has to be redrawn.
   * The header comes with the first batch, or at the end when none came.
   */
  tableStream<T>(columns: readonly Column<T>[]): TableStream<T> {
    let layout: { shown: LaidColumn<T>[]; widths: number[] } | null = null;
    let begun = false;
    const piped = !this.#io.stdoutIsTTY;
    const header = () => (piped ? [`${columns.map((c) => sanitize(c.header)).join('\t')}\n`] : []);
    return {
      rows: (rows) => {
        if (rows.length === 0) return;
        if (piped) {
          const lines = rows.map((row) => columns.map((c) => sanitize(c.plain(row))).join('\t'));
          this.#io.stdout.write(`${[...(begun ? [] : header()), ...lines.map((line) => `${line}\n`)].join('')}`);
          begun = true;
          return;
        }
        layout ??= this.#layOut(columns, rows);
        const { shown, widths } = layout;
        const laid = begun ? shown.map((c, i) => layColumn(c.column, rows, widths[i]!)) : shown;
        this.#drawChunks(laid, widths, rows.length, !begun);
        begun = true;
      },
      end: () => {
        if (begun) return;
        begun = true;
        if (piped) {
          this.#io.stdout.write(header().join(''));
          return;
        }
        const empty = this.#layOut(columns, []);
        this.#drawChunks(empty.shown, empty.widths, 0, true);
      },
    };
  }

  /** Which columns fit the terminal, laid out for `rows`, and their widths. */
  #layOut<T>(columns: readonly Column<T>[], rows: readonly T[]): { shown: LaidColumn<T>[]; widths: number[] } {
    let shown = columns.map((column) => layColumn(column, rows));
    const steps = [
      ...shown.filter((c) => c.column.shrink !== undefined).map((c) => ({ rank: c.column.shrink!.rank - 0.5, column: c.column, drop: false })),
      ...shown.filter((c) => c.column.dropRank !== undefined).map((c) => ({ rank: c.column.dropRank!, column: c.column, drop: true })),
    ].sort((a, b) => a.rank - b.rank);
    const fullWidth = () => shown.reduce((sum, c) => sum + c.width, 0) + GAP.length * (shown.length - 1);
    // A table keeps at least one column, however narrow the terminal.
    for (const step of steps) {
      if (shown.length <= 1 || fullWidth() <= this.columns) break;
      const at = shown.findIndex((c) => c.column === step.column);
      if (at === -1) continue;
      if (step.drop) {
        shown = shown.filter((_, i) => i !== at);
      } else {
        const width = Math.max(step.column.shrink!.minWidth, shown[at]!.width - (fullWidth() - this.columns));
        if (width < shown[at]!.width) shown = shown.map((c, i) => (i === at ? layColumn(c.column, rows, width) : c));
      }
    }
    // A column cut before others were dropped gets back what they left.
    for (const [at, c] of shown.entries()) {
      const spare = this.columns - fullWidth();
      if (c.column.shrink === undefined || spare <= 0) continue;
      const whole = layColumn(c.column, rows);
      if (whole.width > c.width) shown[at] = layColumn(c.column, rows, Math.min(whole.width, c.width + spare));
    }
    return { shown, widths: shown.map((c) => c.width) };
  }

  #drawChunks<T>(laid: readonly LaidColumn<T>[], colWidths: number[], count: number, withHead: boolean): void {
    const head = laid.map((c) => bold(c.header, this.#out));
    for (let start = 0; start === 0 || start < count; start += CHUNK_ROWS) {
      const table = new this.#Table!({ head: withHead && start === 0 ? head : [], colWidths, chars: BORDERLESS, style: UNSTYLED, wordWrap: false });
      const end = Math.min(count, start + CHUNK_ROWS);
      for (let row = start; row < end; row++) table.push(laid.map((c) => paint([c.cells[row]!], this.#out)));
      // The last column is padded to its width like the others.
      this.#io.stdout.write(`${table.toString().replace(/ +$/gm, '')}\n`);
    }
  }

  /** On a terminal, bold labels aligned before their values; piped, `label<TAB>value` lines. */
  record(fields: readonly Field[]): void {
    if (fields.length === 0) return;
    if (!this.#io.stdoutIsTTY) {
      this.#io.stdout.write(`${fields.map((f) => `${sanitize(f.label.toLowerCase())}\t${sanitize(f.plain)}`).join('\n')}\n`);
      return;
    }
    const labels = fields.map((f) => sanitize(f.label));
    const widest = Math.max(...labels.map(displayWidth));
    const lines = fields.map((f, i) => {
      const pad = ' '.repeat(widest - displayWidth(labels[i]!) + GAP.length);
      return `${bold(labels[i]!, this.#out)}${pad}${paint(runsOf(f.human), this.#out)}`.trimEnd();
    });
    this.#io.stdout.write(`${lines.join('\n')}\n`);
  }

  /**
   * Terminal rows a message takes, written now by `kind` (info, warn or
   * failure, each a call of its own): its lines broken between words as the
   * message is, and a part still wider than the terminal (a long word, a
   * command) wrapped by the terminal. What a screen drawn to fit counts with.
   */
  messageRows(kind: 'info' | 'warn' | 'failure', lines: readonly Line[]): number {
    if (lines.length === 0 || (kind === 'info' && this.#quiet)) return 0;
    const columns = Math.max(1, this.columns);
    return this.#parts(PREFIXES[kind], lines).reduce((rows, part) => rows + Math.max(1, Math.ceil(widthOf(part) / columns)), 0);
  }

  /** Each line on stderr, the prefix before the first; on a terminal, long lines wrapped between words. */
  #message(prefix: Run | null, lines: readonly Line[]): void {
    if (lines.length === 0) return;
    const out = this.#parts(prefix, lines).map((part) => paint(part, this.#err));
    const clear = this.#progressShown ? '\r\x1b[2K' : '';
    this.#progressShown = false;
    const text = `${out.join('\n')}\n`;
    this.#io.stderr.write(`${clear}${text}`);
    this.#io.said?.(text);
  }

  /** The parts a message is written in, one a line of the terminal's before it wraps anything itself. */
  #parts(prefix: Run | null, lines: readonly Line[]): Run[][] {
    return lines.flatMap((line, i) => {
      let runs = runsOf(line);
      if (i === 0 && prefix !== null) runs = runs.some((r) => r.text !== '') ? [prefix, run(' '), ...runs] : [prefix];
      return this.#io.stderrIsTTY ? wrap(runs, this.columns) : [runs];
    });
  }
}

const PREFIXES = { info: null, warn: run('!', 'yellow'), failure: run('error:', 'red') } as const;

function run(text: string, tone?: Tone): Run {
  return { text: sanitize(text), tone, raw: text };
}

function isList<T>(value: T | readonly T[]): value is readonly T[] {
  return Array.isArray(value);
}

function runsOf(line: Line): Run[] {
  return (isList(line) ? line : [line]).map((segment) => (typeof segment === 'string' ? run(segment) : run(segment.text, segment.tone)));
}

function bold(text: string, chalk: ChalkInstance | null): string {
  return chalk ? chalk.bold(text) : text;
}

/** Neighbouring runs of one tone are painted as one, so a toned phrase broken into words costs one pair of codes. */
function paint(runs: readonly Run[], chalk: ChalkInstance | null): string {
  let text = '';
  let pending = '';
  let pendingTone: Tone | undefined;
  const flush = () => {
    text += pendingTone === undefined || pending === '' || !chalk ? pending : chalk[pendingTone](pending);
    pending = '';
  };
  for (const r of runs) {
    if (r.tone !== pendingTone) {
      flush();
      pendingTone = r.tone;
    }
    pending += r.text;
  }
  flush();
  return text;
}

function widthOf(runs: readonly Run[]): number {
  return runs.reduce((sum, r) => sum + displayWidth(r.text), 0);
}

/** Runs cut with … to `max` columns in all. */
function cutRuns(runs: readonly Run[], max: number): Run[] {
  if (widthOf(runs) <= max) return [...runs];
  const out: Run[] = [];
  let left = max;
  for (const r of runs) {
    const width = displayWidth(r.text);
    if (width < left) {
      out.push(r);
      left -= width;
    } else {
      out.push({ ...r, text: fit(r.raw, left).text });
      break;
    }
  }
  return out;
}

/**
 * A command a person may copy: anything in backticks, and `svc` followed by
 * one of its commands, up to a closing parenthesis, a comma, a semicolon or
 * a full stop that ends the sentence. Its spaces do not break a line: a
 * line broken inside a command would paste as two.
 */
const COMMAND = /`[^`]*`|\bsvc (?:keys|login|logout|profile|serve|status|api|completion|help)\b(?:[^)`,;.]|\.(?! |$))*/g;

/** Offsets in `text` of the spaces inside a command. */
function spacesInCommands(text: string): Set<number> {
  const inside = new Set<number>();
  for (const match of text.matchAll(COMMAND)) {
    const command = match[0].trimEnd();
    for (let i = command.indexOf(' '); i !== -1; i = command.indexOf(' ', i + 1)) inside.add(match.index + i);
  }
  return inside;
}

/**
 * A line longer than `width` broken at spaces, each later part indented by
 * `indent` (two by default); a word longer than a line stays whole, and so does a command (the
 * terminal wraps a command longer than a line itself, which copies as one
 * line). Widths are of the text alone, so colour takes no room.
 */
function wrap(runs: readonly Run[], width: number, indent = 2): Run[][] {
  if (widthOf(runs) <= width) return [[...runs]];
  const glued = spacesInCommands(runs.map((r) => r.text).join(''));
  // Words: the spaces before them, then what runs up to the next space, across segments.
  const words: { space: Run[]; body: Run[] }[] = [];
  let word = { space: [] as Run[], body: [] as Run[] };
  let offset = 0;
  for (const r of runs) {
    for (const piece of r.text.split(/( +)/)) {
      if (piece === '') continue;
      const part = { text: piece, tone: r.tone, raw: piece };
      const at = offset;
      offset += piece.length;
      if (piece.startsWith(' ') && !glued.has(at)) {
        if (word.body.length > 0) {
          words.push(word);
          word = { space: [], body: [] };
        }
        word.space.push(part);
      } else {
        word.body.push(part);
      }
    }
  }
  // Spaces at the end of a line that is broken anyway would only make a blank part.
  if (word.body.length > 0) words.push(word);
  const lines: Run[][] = [];
  let current: Run[] = [];
  let used = 0;
  for (const { space, body } of words) {
    const spaceWidth = widthOf(space);
    const bodyWidth = widthOf(body);
    if (current.length > 0 && used + spaceWidth + bodyWidth > width) {
      lines.push(current);
      current = [run(' '.repeat(indent)), ...body];
      used = indent + bodyWidth;
    } else {
      current.push(...space, ...body);
      used += spaceWidth + bodyWidth;
    }
  }
  lines.push(current);
  return lines;
}

interface LaidColumn<T> {
  column: Column<T>;
  header: string;
  cells: Run[];
  width: number;
}

/** A column's cells sanitised and cut once (to `width` when given), and its width: the widest of them and the header. */
function layColumn<T>(column: Column<T>, rows: readonly T[], width?: number): LaidColumn<T> {
  const cap = Math.min(column.maxWidth ?? Infinity, width ?? Infinity);
  const header = fit(column.header, cap);
  let widest = Math.max(1, header.width);
  const cells = rows.map((row): Run => {
    const segment = column.human(row);
    const raw = typeof segment === 'string' ? segment : segment.text;
    const shown = fit(raw, cap);
    if (shown.width > widest) widest = shown.width;
    return { text: shown.text, tone: typeof segment === 'string' ? undefined : segment.tone, raw };
  });
  return { column, header: header.text, cells, width: widest };
}
