/**
 * Keys in a repository's history (docs/contract.md §C11): every blob
 * reachable from any ref, each read once however many commits hold it
 * (`git rev-list --objects --all`, then `git cat-file --batch`), rather
 * than every commit's diff as `git log -p` makes them. Only for the blobs
 * that hold a key is the history read again, without contents (`git log
 * --raw`), for the commits that brought each in and at which path.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { CliError, UsageError } from '../errors/errors.js';
import type { FoundKey } from '../domain/find-keys.js';
import { emptyTally, type Finding, type Tally } from './places.js';
import { scanBytes } from './stream.js';
import { readNul } from './lines.js';

export interface GitOptions {
  maxFileSize: number;
}

interface Blob {
  id: string;
  size: number;
  /** The path rev-list names it by: one of the paths it had. */
  path: string;
}

/**
 * `git` in `repo`, which may be anyone's: nothing its configuration names
 * is run (a file system monitor, a pager, an external diff; the diff's
 * text conversion is turned off where it is read), and paths come unquoted.
 */
const SAFE = ['-c', 'core.quotePath=false', '-c', 'core.fsmonitor=false', '-c', 'core.untrackedCache=false', '-c', 'diff.external=', '-c', 'core.pager=cat', '--no-pager'];

/** `stdin`: where it reads from (another git's output, passed to it directly), else a pipe of svc's. */
export function git(repo: string, args: readonly string[], stdin: NodeJS.ReadableStream | 'pipe' = 'pipe'): ChildProcessWithoutNullStreams {
  return spawn('git', ['-C', repo, ...SAFE, ...args], {
    stdio: [stdin as 'pipe', 'pipe', 'pipe'],
    env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' },
  });
}

/** What a git command printed, or a CliError with what it said on stderr. */
async function gitOutput(repo: string, args: readonly string[]): Promise<string> {
  const child = git(repo, args);
  child.stdin.end();
  const [out, err, code] = await Promise.all([collect(child.stdout), collect(child.stderr), exited(child)]);
  if (code !== 0) throw gitFailed(args, err);
  return out;
}

function gitFailed(args: readonly string[], stderr: string): CliError {
  const said = stderr.trim().split('\n')[0] ?? '';
  return new CliError(`git ${args[0]} failed${said === '' ? '' : `: ${said}`}`);
}

/** The repository's top directory (its work tree's, or the git directory of a bare one); a UsageError where `repo` is no repository. */
export async function repositoryRoot(repo: string): Promise<{ top: string; bare: boolean; shallow: boolean }> {
  let answer: string;
  try {
    answer = await gitOutput(repo, ['rev-parse', '--is-bare-repository', '--is-shallow-repository', '--absolute-git-dir']);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new CliError('git is not installed (or not on PATH): svc scan --git and --staged run it.');
    throw new UsageError(`${repo} is not a git repository (${(error as Error).message.replace(/^git rev-parse failed: /, '')}).`);
  }
  const [bare, shallow, gitDir] = answer.trim().split('\n');
  if (bare === 'true') return { top: gitDir!, bare: true, shallow: shallow === 'true' };
  return { top: (await gitOutput(repo, ['rev-parse', '--show-toplevel'])).trim(), bare: false, shallow: shallow === 'true' };
}

export async function scanHistory(repo: string, options: GitOptions, onFinding: (finding: Finding) => void): Promise<Tally> {
  const tally = emptyTally();
  const found = new Map<string, { blob: Blob; keys: FoundKey[] }>();
  await readReachableBlobs(repo, tally, options.maxFileSize, (blob, bytes) => {
    tally.read++;
    tally.bytes += bytes.length;
    scanBytes(bytes, (key) => {
      const entry = found.get(blob.id) ?? { blob, keys: [] };
      entry.keys.push(key);
      found.set(blob.id, entry);
    });
  });
  if (found.size === 0) return tally;
  const brought = await commitsBringing(repo, new Set(found.keys()));
  for (const { blob, keys } of found.values()) {
    const at = brought.get(blob.id) ?? [{ commit: null, path: blob.path }];
    for (const { commit, path } of at) {
      for (const key of keys) {
        onFinding({
          key: key.key,
          place: { source: 'git', path, commit, blob: blob.id, line: key.line, column: key.column },
          length: key.length,
          escaped: key.escaped,
          marked: key.marked,
          context: key.context,
        });
      }
    }
  }
  return tally;
}

/**
 * Every blob reachable from a ref, each handed to `onBlob` whole as it
 * comes, through one pipeline that runs at once: `rev-list` names the
 * blobs, `cat-file --batch-check` gives their sizes (rev-list's output goes
 * to it directly, not through svc), and `cat-file --batch` is asked for
 * each within the limit as its size comes, so that git finds the next
 * blobs while svc reads the last. Those over the limit are counted.
 */
async function readReachableBlobs(repo: string, tally: Tally, maxFileSize: number, onBlob: (blob: Blob, bytes: Buffer) => void): Promise<void> {
  const list = git(repo, ['rev-list', '--objects', '--all', '--filter=object:type=blob', '--filter-provided-objects']);
  list.stdin.end();
  const check = git(repo, ['cat-file', '--batch-check=%(objectname) %(objecttype) %(objectsize) %(rest)'], list.stdout);
  const batch = git(repo, ['cat-file', '--batch']);
  const errors = [collect(list.stderr), collect(check.stderr), collect(batch.stderr)];
  // Asked of `cat-file --batch`, in the order it answers.
  const asked: Blob[] = [];
  const asking = (async () => {
    let rest = '';
    for await (const chunk of check.stdout as AsyncIterable<Buffer>) {
      const lines = (rest + chunk.toString('utf8')).split('\n');
      rest = lines.pop()!;
      let ids = '';
      for (const line of lines) {
        const [id, type, size, ...path] = line.split(' ');
        // A blob a ref reaches that git cannot read is a damaged repository, not a blob without keys.
        if (type === 'missing') throw new CliError(`git cannot read blob ${id}, which a ref reaches: the repository is damaged or a partial clone is offline (git fsck tells).`);
        if (type !== 'blob') continue;
        const bytes = Number(size);
        if (bytes > maxFileSize) tally.tooLarge++;
        else {
          asked.push({ id: id!, size: bytes, path: path.join(' ') });
          ids += `${id}\n`;
        }
      }
      if (ids !== '' && !batch.stdin.write(ids)) await once(batch.stdin, 'drain');
    }
    batch.stdin.end();
  })();
  const reading = readBatch(batch.stdout, asked, onBlob);
  let codes: (number | null | void)[];
  try {
    codes = await Promise.all([exited(list), exited(check), exited(batch), asking, reading]);
  } catch (error) {
    // The others would wait for input that will not come.
    for (const child of [list, check, batch]) child.kill();
    throw error;
  }
  const names = ['rev-list', 'cat-file', 'cat-file'];
  for (let i = 0; i < 3; i++) if (codes[i] !== 0) throw gitFailed([names[i]!], await errors[i]!);
}

/** Its exit code: 'exit', not 'close', which waits for stdio svc handed on to another git and never closes here. */
async function exited(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}

async function collect(stream: NodeJS.ReadableStream): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

/** `cat-file --batch`'s answers, each `<id> blob <size>`, a newline, the blob and a newline, handed to `onBlob` with the blob `asked` names next. */
async function readBatch(stdout: NodeJS.ReadableStream, asked: Blob[], onBlob: (blob: Blob, bytes: Buffer) => void): Promise<void> {
  let next = 0;
  let buffered: Buffer[] = [];
  let length = 0;
  // Bytes of the current blob still to come (its content and the newline after it); -1 before its header.
  let remaining = -1;
  let header = '';
  for await (const chunk of stdout as AsyncIterable<Buffer>) {
    let at = 0;
    while (at < chunk.length) {
      if (remaining === -1) {
        const newline = chunk.indexOf(10, at);
        if (newline === -1) {
          header += chunk.toString('latin1', at);
          break;
        }
        header += chunk.toString('latin1', at, newline);
        at = newline + 1;
        const size = Number(header.split(' ')[2]);
        if (header.endsWith(' missing') || !Number.isSafeInteger(size)) throw new CliError(`git cat-file could not read blob ${header.split(' ')[0]}.`);
        header = '';
        remaining = size + 1;
        buffered = [];
        length = 0;
        continue;
      }
      const take = Math.min(remaining, chunk.length - at);
      buffered.push(chunk.subarray(at, at + take));
      length += take;
      at += take;
      remaining -= take;
      if (remaining === 0) {
        const whole = buffered.length === 1 ? buffered[0]! : Buffer.concat(buffered, length);
        onBlob(asked[next++]!, whole.subarray(0, length - 1));
        remaining = -1;
      }
    }
  }
}

/**
 * For each of `ids`, the commits of any ref's history whose change made a
 * file that blob, and the file's path: where the key came in. Merges'
 * own changes are not read (they would name again what their branches
 * brought).
 */
async function commitsBringing(repo: string, ids: ReadonlySet<string>): Promise<Map<string, { commit: string; path: string }[]>> {
  const child = git(repo, ['log', '--all', '--raw', '--no-abbrev', '--no-renames', '-z', '--format=%x01%H']);
  child.stdin.end();
  const errors = collect(child.stderr);
  const at = new Map<string, { commit: string; path: string }[]>();
  let commit = '';
  // After a raw entry comes its path: the blob the entry made, when it is one of `ids`, else '' (the path is skipped).
  let entryBlob: string | null = null;
  await readNul(child.stdout, (field) => {
    if (entryBlob !== null) {
      if (entryBlob !== '') {
        const list = at.get(entryBlob) ?? [];
        list.push({ commit, path: field });
        at.set(entryBlob, list);
      }
      entryBlob = null;
      return;
    }
    const text = field.startsWith('\n') ? field.slice(1) : field;
    if (text.startsWith('\x01')) commit = text.slice(1);
    else if (text.startsWith(':')) {
      const blob = text.split(' ')[3] ?? '';
      entryBlob = ids.has(blob) ? blob : '';
    }
  });
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0) throw gitFailed(['log'], await errors);
  return at;
}
