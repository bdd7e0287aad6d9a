/**
 * Keys that a commit of the index would add (docs/contract.md §C11): the
 * lines `git diff --cached` adds, each with its line number in the staged
 * file, so that a pre-commit hook names the line and leaves alone a key
 * the repository had before. Binary files are read as text.
 */
import { once } from 'node:events';
import { findKeys } from '../domain/find-keys.js';
import { CliError } from '../errors/errors.js';
import { emptyTally, type Finding, type Tally } from './places.js';
import { git } from './git.js';

export async function scanIndex(repo: string, onFinding: (finding: Finding) => void): Promise<Tally> {
  const tally = emptyTally();
  const child = git(repo, ['diff', '--cached', '--no-color', '--no-ext-diff', '--no-textconv', '--text', '--no-renames', '--diff-filter=d', '-U0', '--src-prefix=a/', '--dst-prefix=b/']);
  child.stdin.end();
  const errors: Buffer[] = [];
  child.stderr.on('data', (b: Buffer) => errors.push(b));
  let path = '';
  let line = 0;
  let inHunks = false;
  const onLine = (text: string) => {
    if (text.startsWith('diff --git ')) {
      inHunks = false;
      return;
    }
    if (!inHunks) {
      if (text.startsWith('+++ ')) {
        path = diffPath(text.slice(4));
        tally.read++;
      } else if (text.startsWith('@@ ')) {
        inHunks = true;
        line = hunkStart(text);
      }
      return;
    }
    if (text.startsWith('@@ ')) {
      line = hunkStart(text);
      return;
    }
    if (!text.startsWith('+')) return;
    tally.bytes += text.length;
    const added = text.slice(1);
    for (const found of findKeys(added, line)) {
      onFinding({ key: found.key, place: { source: 'index', path, line, column: found.column }, length: found.length, escaped: found.escaped, marked: found.marked, context: found.context });
    }
    line++;
  };
  let rest = '';
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    const text = rest + chunk.toString('latin1');
    const lines = text.split('\n');
    rest = lines.pop()!;
    for (const l of lines) onLine(l);
  }
  if (rest !== '') onLine(rest);
  const [code] = (child.exitCode === null ? await once(child, 'close') : [child.exitCode]) as [number | null];
  if (code !== 0) throw new CliError(`git diff --cached failed: ${Buffer.concat(errors).toString('utf8').trim().split('\n')[0] ?? ''}`);
  return tally;
}

/** The first line of the staged file a hunk's header (`@@ -3,0 +4,2 @@`) adds at. */
function hunkStart(header: string): number {
  return Number(/ \+(\d+)/.exec(header)?.[1] ?? '1');
}

/** `b/path` as git writes it after `+++ `, C-quoted ("b/a\tb") when the path holds a quote, a backslash or a control character; bytes as Latin-1, as the diff was read. */
function diffPath(field: string): string {
  const quoted = field.startsWith('"') ? unquote(field) : field;
  const bytes = Buffer.from(quoted, 'latin1').toString('utf8');
  return bytes.startsWith('b/') ? bytes.slice(2) : bytes;
}

const ESCAPES: Record<string, string> = { a: '\x07', b: '\b', t: '\t', n: '\n', v: '\v', f: '\f', r: '\r', '"': '"', '\\': '\\' };

function unquote(field: string): string {
  const inner = field.slice(1, field.lastIndexOf('"'));
  return inner.replace(/\\([0-7]{3}|.)/g, (_, escape: string) => (escape.length === 3 ? String.fromCharCode(Number.parseInt(escape, 8)) : (ESCAPES[escape] ?? escape)));
}
