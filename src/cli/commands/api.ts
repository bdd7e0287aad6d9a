import type { Command } from 'commander';
import type { RequestPhase } from '../../client/api.js';
import { ApiError } from '../../client/errors.js';
import { answerThroughInterrupt, whyNothingYet } from '../terminal/answer-through-interrupt.js';
import { API_PREFIX, apiPaths } from '../../contract/paths.js';
import { findSecret, readKey } from '../../client/key-view.js';
import { InterruptedError, UsageError } from '../errors/errors.js';
import { nearest } from '../domain/suggest.js';
import { refuseKey } from '../domain/keys.js';
import type { App } from '../program/program.js';
import { readAll, readStdin, readTyped, refuseUnattended, type Typed } from '../dialogs/read-text.js';
import { createRenderer } from '../terminal/renderer.js';
import { clip, shellWord } from '../text/text.js';
import type { KeySession } from '../session/session.js';
import type { NamedReader } from '../terminal/io.js';
import { onlyTimeWarning } from '../views/keys.js';
import { refuseDiscardedStdout, secretWritten } from '../views/show-new-key.js';

export interface ApiOptions {
  method?: string;
  field?: string[];
  rawField?: string[];
  input?: string;
  include?: boolean;
}

// No default ([]): help would print it as "(default: [])".
const collect = (value: string, previous: string[] = []) => [...previous, value];

export function register(program: Command, app: App): void {
  program
    .command('api')
    .description('make an authenticated request to any path under /api/service and print the JSON answer')
    .argument('<path>', 'path below /api/service, e.g. /user/api-keys')
    .option('-X, --method <method>', 'HTTP method: GET, POST, PUT, PATCH or DELETE (default: GET, or POST when a body is given)')
    .option('-f, --raw-field <key=value>', 'add a string field to the JSON body (repeatable)', collect)
    .option('-F, --field <key=value>', 'add a typed field: true, false, null and numbers as JSON, @file for a file\'s text (repeatable)', collect)
    .option('--input <file>', "read the JSON body from a file ('-' for stdin)")
    .option('-i, --include', 'print the status line and headers on stderr')
    .addHelpText(
      'after',
      '\nManagement paths get a 10 s timeout; other paths (generation endpoints) 60 s, unless --timeout says otherwise. 401, 429 and retry policies are those of every command. An error answer in JSON is printed as the server sent it, and the exit code says it failed (a 401, a rate limit svc stopped waiting for, and an answer that is not JSON are said on stderr only); with --json, svc\'s failure document instead, the answer in .error.body.\n\nExamples:\n  $ svc api /workspace\n  $ svc api /user/api-keys -f name=nightly -F expiresAt=null\n  $ svc api -X PATCH /user/api-keys/key_0123abcd -F enabled=false\n  $ echo \'{"name":"from-file"}\' | svc api /user/api-keys --input -',
    )
    .action(app.action('key', run));
}

const MANAGEMENT_TIMEOUT_MS = 10_000;
const GENERATION_TIMEOUT_MS = 60_000;

export async function run(session: KeySession, pathArg: string, opts: ApiOptions): Promise<void> {
  const path = normalisePath(pathArg);
  const given = opts.method === undefined ? undefined : knownMethod(opts.method);
  const body = await buildBody(session, opts);
  // A key in the body would be stored where the server keeps what it is sent (a key's name), and printed back.
  if (body !== undefined) refuseKey(JSON.stringify(body), 'something to send in a request body');
  const method = given ?? (body === undefined ? 'GET' : 'POST');
  // A POST to the key collection makes a key whose secret only stdout would get: refused before it is made, as
  // `keys create` is; another answer that holds a secret is found only once it came (secretWritten below).
  if (method === 'POST' && path.replace(/[?#].*$/, '').replace(/\/+$/, '') === apiPaths.keys) {
    refuseDiscardedStdout(session.io, 'Send stdout somewhere, or make the key with `svc keys create NAME --to-file <path>`.');
  }
  const timeoutMs = session.options.timeout ?? (isManagementPath(path) ? MANAGEMENT_TIMEOUT_MS : GENERATION_TIMEOUT_MS);
  const { client, render } = session;
  try {
    const send = (onPhase?: (phase: RequestPhase) => void) => client.request<unknown>(method, path, { body, timeoutMs, ...(onPhase ? { onPhase } : {}) });
    const { value: res, interrupted } = method === 'POST' ? await throughCtrlC(session, path, body, send) : { value: await send(), interrupted: null };
    if (opts.include) await printHead(session, res.status, res.headers);
    // The answer of a create (or of any path that makes a key) holds a secret no later request shows again.
    const secret = findSecret(res.body);
    if (secret !== null) render.handingOn(secret);
    if (res.status !== 204) render.json(res.body);
    if (secret !== null) {
      if (!session.options.quiet) render.warn(onlyTimeWarning(readKey(res.body).id));
      await secretWritten(render, session.io, readKey(res.body).id);
    }
    if (interrupted) throw new InterruptedError(['Stopped after the answer came (shown above).'], interrupted);
  } catch (error) {
    // The server's own error document is the answer a script asked for, as gh api
    // prints it; the exit code still tells failure apart. Under --json stdout holds
    // svc's failure document instead, the server's inside it (`body`).
    if (error instanceof ApiError && error.document !== undefined && error.status !== 401 && !session.options.json) render.json(error.document);
    throw error;
  }
}

/**
 * A POST, which may make a key: its answer may hold the only copy of the secret, so a first Ctrl-C (or
 * SIGTERM) while it is out waits on for the answer, which is then shown before the command ends with the signal's code (130, 143);
 * a second stops at once, saying what may have been made. Between attempts none of which can have done
 * anything (the wait after a 429, a retry after a connection that never reached the server) there is no
 * answer to wait for: Ctrl-C there stops at once, saying nothing was changed, as keys create does. Other
 * methods answer nothing that cannot be asked again, and Ctrl-C ends them at once (wait.ts), as it does
 * every command.
 */
async function throughCtrlC<T>(
  session: KeySession,
  path: string,
  body: unknown,
  send: (onPhase: (phase: RequestPhase) => void) => Promise<T>,
): Promise<{ value: T; interrupted: NodeJS.Signals | null }> {
  const request = `POST ${clip(path, 200)}`;
  const name = typeof body === 'object' && body !== null && typeof (body as { name?: unknown }).name === 'string' ? (body as { name: string }).name : null;
  let interrupted: NodeJS.Signals | null = null;
  let phase: RequestPhase = { state: 'out' };
  const nothingDone = (signal: NodeJS.Signals) =>
    phase.state === 'waiting' && !phase.afterLostAnswer
      ? new InterruptedError([`Stopped before ${request} was tried again: ${whyNothingYet(phase.reason)}, so nothing was changed.`], signal)
      : undefined;
  const value = await answerThroughInterrupt(
    session.deps.onSignal,
    (signal) => {
      const stop = nothingDone(signal);
      if (stop) return stop;
      interrupted = signal;
      session.render.warn(`Interrupted while ${request} was out: waiting for its answer, which may hold the only copy of a secret (Ctrl-C again to stop at once).`);
    },
    (signal) =>
      new InterruptedError(
        [
          `Stopped while ${request} was out: the server may have made the change. If it made a key, nobody has seen its secret:`,
          `find it with \`svc keys list${name === null ? '' : ` --name ${shellWord(name)}`}\` and revoke it.`,
        ],
        signal,
      ),
    () =>
      send((next) => {
        phase = next;
        const stop = interrupted === null ? undefined : nothingDone(interrupted);
        if (stop) throw stop;
      }),
  );
  return { value, interrupted };
}

/**
 * The methods of a JSON API (HEAD and OPTIONS answer with no JSON to
 * print). Anything else is most likely a typo, which the server would
 * answer with a 404 or 405 that hides it: it is refused before any
 * request, with the nearest method.
 */
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

function knownMethod(given: string): string {
  const method = given.trim().toUpperCase();
  if (METHODS.includes(method)) return method;
  const near = nearest(method, METHODS.map((m) => [m]));
  const guess = near.length === 0 ? '' : ` Did you mean ${near.join(' or ')}?`;
  throw new UsageError([`'${clip(given, 40)}' is not an HTTP method.${guess}`, `-X takes one of ${METHODS.join(', ')}.`]);
}

export function normalisePath(raw: string): string {
  refuseKey(raw, 'a path');
  if (/^[a-z]+:\/\//i.test(raw)) throw new UsageError('Give a path below /api/service, not a URL; --base-url sets the server.');
  const path = raw.startsWith('/') ? raw : `/${raw}`;
  const below = path.startsWith(`${API_PREFIX}/`) ? path.slice(API_PREFIX.length) : path;
  // URL parsers resolve `.` and `..` (percent-encoded too): `/user/../../x` would take the key outside /api/service.
  const segments = below.split(/[?#]/, 1)[0]!.split('/');
  if (segments.some((segment) => /^(\.|%2e){1,2}$/i.test(segment))) {
    throw new UsageError(`'${clip(raw, 200)}' climbs out of the path: svc api sends the key only below ${API_PREFIX}.`);
  }
  return below;
}

function isManagementPath(path: string): boolean {
  const bare = path.split('?')[0]!;
  return bare === apiPaths.workspace || bare === apiPaths.keys || bare.startsWith(`${apiPaths.keys}/`);
}

async function buildBody(session: KeySession, opts: ApiOptions): Promise<unknown> {
  const { field = [], rawField = [] } = opts;
  const hasFields = field.length > 0 || rawField.length > 0;
  if (opts.input !== undefined) {
    if (hasFields) throw new UsageError('Use either --input or -f/-F fields, not both.');
    const text = opts.input === '-' ? await readStdin(session, typedText('stdin')) : await readNamed(session, [openNamed(session, opts.input, '--input')]).then(([only]) => only!);
    try {
      return JSON.parse(text);
    } catch {
      throw new UsageError(`${opts.input === '-' ? 'stdin' : clip(opts.input, 200)} is not valid JSON.`);
    }
  }
  if (!hasFields) return undefined;
  const body: Record<string, unknown> = {};
  for (const pair of rawField) {
    const [key, value] = splitField(pair);
    body[key] = value;
  }
  const typed = field.map(splitField);
  const named = typed.filter(([, value]) => value.startsWith('@')).map(([, value]) => openNamed(session, value.slice(1), '-F'));
  const texts = await readNamed(session, named);
  for (const [key, value] of typed) body[key] = value.startsWith('@') ? texts.shift() : typedValue(value);
  return body;
}

/** A file named on the command line (`--input PATH`, `-F k=@PATH`), opened as IO.readerOf says but not yet read. */
interface Named {
  path: string;
  option: string;
  reader: NamedReader | null;
  /** What svc's messages call it: `stdin`, or the path. */
  source: string;
}

function openNamed(session: KeySession, path: string, option: string): Named {
  const reader = session.io.readerOf?.(path) ?? null;
  return { path, option, reader, source: reader === 'stdin' ? 'stdin' : clip(path, 200) };
}

/**
 * What each named file holds, in order. Every mistake is found before svc waits on anyone: stdin, a terminal
 * or a pipe can be read once, and the same one named twice, however spelt (`f`, `./f`, a link to it), would
 * have the second read wait for ever on what the first used up; a terminal is not read at all unattended;
 * a file that cannot be read is the caller's mistake too, said with its name (all exit 2). Files are read
 * first for that reason; then stdin, terminals and pipes, in order, on the event loop, a terminal once svc
 * has said it waits for it.
 */
async function readNamed(session: KeySession, named: Named[]): Promise<string[]> {
  try {
    const first = new Map<string, string>();
    for (const { path, reader, source } of named) {
      if (reader === null) continue;
      const id = reader === 'stdin' ? 'stdin' : reader.id;
      const earlier = first.get(id);
      if (earlier !== undefined) {
        const again = reader === 'stdin' || earlier === path ? '' : ` (as ${clip(earlier, 200)})`;
        throw new UsageError(`${source} can be read only once; it is named twice${again}.`);
      }
      first.set(id, path);
      if (reader === 'stdin' ? session.io.stdinIsTTY : reader.terminal) refuseUnattended(session, typedText(source));
    }
    const texts = new Array<string>(named.length);
    for (const [i, { path, option, reader }] of named.entries()) if (reader === null) texts[i] = await readFileArgument(path, option);
    for (const [i, { reader, source }] of named.entries()) {
      if (reader === 'stdin') texts[i] = await readStdin(session, typedText(source));
      else if (reader !== null) texts[i] = await (reader.terminal ? readTyped(session, reader.stream, typedText(source)) : readAll(reader.stream));
    }
    return texts;
  } finally {
    for (const { reader } of named) if (reader !== null && reader !== 'stdin') reader.stream.destroy();
  }
}

function typedText(source: string): Typed {
  return {
    source,
    prompt: 'Reading from the terminal: type the text, then press Ctrl-D on a line of its own (Ctrl-C cancels).',
    otherwise: 'Pipe the text in, or name a file.',
  };
}

/** A file read as a file. */
async function readFileArgument(path: string, option: string): Promise<string> {
  // Loaded here: node:fs/promises costs every other command's start-up a
  // millisecond. Not with import(): on Node 20 the bundle runs in vm.Script,
  // which has no loader for it (bin/load-bundle.js).
  const { readFile } = process.getBuiltinModule('node:fs/promises');
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    const why =
      code === 'ENOENT'
        ? 'there is no such file'
        : code === 'EISDIR'
          ? 'it is a directory'
          : code === 'EACCES'
            ? 'permission denied'
            : code === 'ENXIO'
              ? 'nothing is there to read from (a socket, or a terminal svc is not attached to)'
              : (error as Error).message;
    throw new UsageError(`${option} names ${clip(path, 200)}, which cannot be read: ${why}.`);
  }
}

function splitField(pair: string): [string, string] {
  const at = pair.indexOf('=');
  if (at <= 0) throw new UsageError(`Fields are key=value; got '${clip(pair, 200)}'.`);
  return [pair.slice(0, at), pair.slice(at + 1)];
}

/** A -F value as JSON would have it: true, false, null, a number, else the string (`@path` is read by buildBody). */
export function typedValue(value: string): unknown {
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (value === 'null') return null;
  if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(value)) return Number(value);
  return value;
}

/** The status line and headers on stderr, as the server sent them but escaped: a header is server text like any other. */
async function printHead(session: KeySession, status: number, headers: Record<string, string | string[] | undefined>): Promise<void> {
  const lines = [`HTTP ${status}`];
  for (const [name, value] of Object.entries(headers)) {
    for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined) lines.push(`${name}: ${v}`);
  }
  (await createRenderer(session.io, { quiet: false })).info(...lines, '');
}
