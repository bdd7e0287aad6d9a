import { Chalk, type ChalkInstance } from 'chalk';
import type { IO } from '../io.js';
import { sanitize, type Line, type Segment } from './text.js';

export interface Column<T> {
  header: string;
  human: (row: T) => Segment;
  plain: (row: T) => string;
  dropRank?: number;
  maxWidth?: number;
}
export interface Field {
  label: string;
  human: Line;
  plain: string;
}

export class Renderer {
  private readonly out: ChalkInstance;
  private readonly err: ChalkInstance;
  constructor(
    private readonly io: IO,
    private readonly options: { quiet: boolean },
  ) {
    this.out = new Chalk({ level: io.colorStdout ? 1 : 0 });
    this.err = new Chalk({ level: io.colorStderr ? 1 : 0 });
  }
  get columns(): number {
    return this.io.columns;
  }
  private paint(line: Line, chalk: ChalkInstance): string {
    const segments = (Array.isArray(line) ? line : [line]) as Segment[];
    return segments.map((s) => (typeof s === 'string' ? sanitize(s) : chalk[s.tone](sanitize(s.text)))).join('');
  }
  private say(prefix: string, value: readonly Line[]): void {
    const lines = value.map((l) => this.paint(l, this.err));
    this.io.stderr.write(`${prefix}${lines.join('\n')}\n`);
  }
  info(...line: Line[]): void {
    if (!this.options.quiet) this.say('', line);
  }
  success(...line: Line[]): void {
    if (!this.options.quiet) this.say(`${this.err.green('✓')} `, line);
  }
  warn(...line: Line[]): void {
    this.say(`${this.err.yellow('!')} `, line);
  }
  failure(lines: readonly Line[]): void {
    this.say(`${this.err.red('error:')} `, lines);
  }
  progress(line: Line): void {
    if (!this.options.quiet && this.io.stderrIsTTY) this.io.stderr.write(`\r\x1b[2K${this.paint(line, this.err)}`);
  }
  clearProgress(): void {
    if (!this.options.quiet && this.io.stderrIsTTY) this.io.stderr.write('\r\x1b[2K');
  }
  json(value: unknown): void {
    this.io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }
  lines(lines: readonly Line[]): void {
    this.io.stdout.write(lines.map((l) => `${this.paint(l, this.out)}\n`).join(''));
  }
  table<T>(columns: readonly Column<T>[], rows: readonly T[]): void {
    if (!this.io.stdoutIsTTY) {
      const lines = [columns.map((c) => c.header), ...rows.map((r) => columns.map((c) => sanitize(c.plain(r))))];
      this.io.stdout.write(lines.map((cells) => cells.join('\t')).join('\n') + '\n');
      return;
    }
    const lines = [columns.map((c) => c.header).join('  '), ...rows.map((r) => columns.map((c) => this.paint(c.human(r), this.out)).join('  '))];
    this.io.stdout.write(lines.join('\n') + '\n');
  }
  record(fields: readonly Field[]): void {
    if (!this.io.stdoutIsTTY) {
      this.io.stdout.write(fields.map((f) => `${f.label.toLowerCase()}\t${sanitize(f.plain)}\n`).join(''));
      return;
    }
    const width = Math.max(...fields.map((f) => f.label.length));
    this.io.stdout.write(fields.map((f) => `${this.out.bold(f.label.padEnd(width))}  ${this.paint(f.human, this.out)}\n`).join(''));
  }
}
