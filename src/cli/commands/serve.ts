import { InvalidArgumentError, Option, type Command } from 'commander';
import { isLoopbackHost } from '../../client/loopback.js';
import { DEFAULT_BASE_URL } from '../../contract/paths.js';
import { PLANS, REQUESTS_PER_MINUTE, type Plan } from '../../contract/plans.js';
import type { LocalServerReady } from '../../contract/types.js';
import type { Deps } from '../terminal/deps.js';
import type { IO } from '../terminal/io.js';
import { createRenderer, type Renderer } from '../terminal/renderer.js';
import { clip, shellWord, tone, type Line } from '../text/text.js';
import type { Session } from '../session/session.js';
import { BrokenPipeError, CliError, UsageError } from '../errors/errors.js';
import type { App } from '../program/program.js';
import { integerAtLeast } from '../program/program.js';
import { readEnv } from '../terminal/environment.js';
import { savedKeyHint } from '../config/file.js';
import { sameServer } from '../session/endpoint.js';

interface ServeOptions {
  local?: boolean;
  host: string;
  port: number;
  /** Undefined unless given, so that one ignored by an existing --data file can be warned about. */
  plan?: Plan;
  data?: string;
  adminToken?: string;
  latency?: Latency;
  failRate?: number;
  pageSize?: number;
}

interface Latency {
  minMs: number;
  maxMs: number;
}

export function register(program: Command, app: App): void {
  program
    .command('serve')
    .description('run the embedded reference server (offline; state in memory unless --data)')
    .option('--local', 'run the embedded reference server (required: the only kind there is)')
    .addOption(new Option('--host <host>', 'address to listen on').default('127.0.0.1', '127.0.0.1'))
    .addOption(new Option('--port <port>', 'port to listen on; 0 picks a free one').default(8787).argParser(parsePort))
    .addOption(
      new Option('--plan <plan>', `plan of the first workspace, ignored with an existing --data file (default: ${DEFAULT_PLAN})`).choices(PLANS),
    )
    .option('--data <file>', 'keep state in this file (key hashes only, never a plaintext key)')
    .option('--admin-token <token>', 'bearer token of the /_local admin area (env SVC_LOCAL_ADMIN_TOKEN; random otherwise)')
    .addOption(new Option('--latency <ms|min-max>', 'delay every API request by ms, or by a random span min-max (e.g. 50-400)').argParser(parseLatency))
    .addOption(new Option('--fail-rate <share>', 'answer this share (0 to 1) of API requests 502 or 503 instead').argParser(parseFailRate))
    .addOption(
      new Option('--page-size <keys>', `keys in a page of GET /user/api-keys, and the most a client's limit gets, 1 to ${MAX_PAGE_SIZE} (default: 1000)`).argParser(
        parsePageSize,
      ),
    )
    .addHelpText(
      'after',
      '\nFaults for single requests (a status, a delay, a hang, a reset, a lost answer) are set through POST /_local/faults; see README.md, "Testing your scripts against failures".\n\nExamples:\n  $ svc serve --local\n  $ svc serve --local --port 0 --json\n  $ svc serve --local --data ./svc-state.json --plan pro\n  $ svc serve --local --latency 50-400 --fail-rate 0.1\n  $ svc serve --local --page-size 20',
    )
    .action(app.action('nothing', run));
}

function parsePort(value: string): number {
  const port = integerAtLeast(0)(value);
  if (port > 65_535) throw new InvalidArgumentError('expected a port number from 0 to 65535.');
  return port;
}

const DEFAULT_PLAN: Plan = 'free';
/** The longest wait a fault may add, as for a rule's delayMs: a day. */
const MAX_LATENCY_MS = 86_400_000;

function parseLatency(value: string): Latency {
  const match = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(value);
  const minMs = Number(match?.[1]);
  const maxMs = match?.[2] === undefined ? minMs : Number(match[2]);
  if (!match || maxMs < minMs || maxMs > MAX_LATENCY_MS) {
    throw new InvalidArgumentError(`expected milliseconds (250) or a range min-max (50-400), at most ${MAX_LATENCY_MS}.`);
  }
  return { minMs, maxMs };
}

/** A page this large is still served in a few milliseconds; much larger ones would hold up every other request. */
const MAX_PAGE_SIZE = 10_000;

function parsePageSize(value: string): number {
  const size = integerAtLeast(1)(value);
  if (size > MAX_PAGE_SIZE) throw new InvalidArgumentError(`expected a number of keys from 1 to ${MAX_PAGE_SIZE}.`);
  return size;
}

/** A plain decimal: Number() alone would also take 0x1, 1e0 or 0b1, each a surprising way to say "every request". */
const SHARE = /^\s*(?:\d+(?:\.\d*)?|\.\d+)\s*$/;

function parseFailRate(value: string): number {
  const share = Number(value);
  if (!SHARE.test(value) || share < 0 || share > 1) {
    throw new InvalidArgumentError('expected a share from 0 to 1, such as 0.1 for one request in ten.');
  }
  return share;
}

/** An admin token travels as a bearer credential, so it must be one visible-ASCII word. */
const ADMIN_TOKEN = /^[\x21-\x7e]+$/;

export async function run(session: Session, options: ServeOptions): Promise<void> {
  const { io, render } = session;
  // The banner and the server's own log are shown even with --quiet; only the next steps are not.
  const log = await createRenderer(io, { quiet: false });
  if (!options.local) {
    throw new UsageError('svc serve needs --local: only the embedded reference server is supported (svc serve --local).');
  }
  const adminToken = options.adminToken ?? (readEnv(io.env, 'SVC_LOCAL_ADMIN_TOKEN') || undefined);
  if (adminToken !== undefined && !ADMIN_TOKEN.test(adminToken)) {
    throw new UsageError('--admin-token (or SVC_LOCAL_ADMIN_TOKEN) must be printable ASCII without spaces.');
  }

  // Loaded only here, so the server never weighs on the start-up of other commands.
  const { startServer, ServerStartError, LockLostError } = await import('../../server/listen.js');
  let server;
  try {
    server = await startServer({
      host: options.host,
      port: options.port,
      plan: options.plan ?? DEFAULT_PLAN,
      dataFile: options.data,
      adminToken,
      faults: { latency: options.latency, failRate: options.failRate },
      pageSize: options.pageSize,
      logError: (error) => log.info(...`svc serve: unexpected error: ${error instanceof Error ? error.stack : String(error)}`.split('\n')),
      logWarning: (message) => log.info(`svc serve: ${message}`),
    });
  } catch (error) {
    if (error instanceof ServerStartError) throw new CliError(`svc serve: ${error.message}`);
    throw error;
  }

  if (!isLoopbackHost(options.host)) {
    render.warn(
      `Listening on ${options.host}: this server has no TLS and is reachable from the network. Use --host 127.0.0.1 unless you mean it.`,
    );
  }
  if (options.plan !== undefined && server.ready.apiKey === null) {
    render.warn(
      `--plan ${options.plan} is ignored: ${options.data} already holds state, whose workspace is on plan ${server.ready.plan}. ` +
        'Change a plan with PATCH /_local/workspaces/{id}, or start with a new --data file.',
    );
  }
  const faults = describeFaults(options);
  // The ready line is a fixed document, so with --json the faults are told on stderr: a run that fails on purpose must say so.
  if (faults && session.options.json) render.warn(`faults on: ${faults}`);
  // Listen for the stop signal before anyone is told the server is ready: a SIGTERM sent on reading the
  // ready line could otherwise land before the handler, killing the process (and leaving its lock behind).
  const stopSignal = untilStopped(session.deps, io);
  if (session.options.json) render.json(server.ready, 'line');
  else printBanner(log, session.options.quiet === true, server.ready, options, io.invokedAs ?? 'svc', await profileTaken(io, server.ready.url));

  const signal = await stopSignal;
  // With its reader gone, what follows goes nowhere; the exit code says why the server stopped.
  const why = signal === READER_GONE ? 'Output closed' : signal === PARENT_GONE ? 'npm, which started svc, has exited' : signal;
  render.info(`${why}: finishing in-flight requests${options.data ? ' and saving state' : ''}…`);
  // A failed last save is reported as a warning by the server itself: everything acknowledged is on disk.
  try {
    await server.close();
  } catch (error) {
    // The server has said on stderr when and how it lost the lock; the exit says it too.
    if (error instanceof LockLostError) throw new CliError(`svc serve: ${error.message}`);
    throw error;
  }
  render.info('Server stopped.');
  if (signal === READER_GONE) throw new BrokenPipeError();
}

const READER_GONE = 'reader gone';
const PARENT_GONE = 'parent gone';
type StopReason = NodeJS.Signals | typeof READER_GONE | typeof PARENT_GONE;

/**
 * Resolves on the first SIGINT or SIGTERM, when the reader of the
 * server's output goes away (`svc serve | tee log`, then the tee is gone),
 * or when npm, having started svc, is gone (whenParentGone): the server
 * then stops as it does on a signal, saving its state and freeing its lock,
 * where exiting at the failed write would leave both.
 * Signals are no longer listened to then: a second Ctrl-C during shutdown
 * finds only bin/svc.js's own handler, which exits at once. Broken writes
 * are taken over till the command ends, as stdout and stderr may share the
 * reader that went.
 */
function untilStopped({ onSignal, schedule }: Pick<Deps, 'onSignal' | 'schedule'>, io: IO): Promise<StopReason> {
  return new Promise((resolve) => {
    let stopped = false;
    const stop = (why: StopReason) => {
      if (stopped) return;
      stopped = true;
      offSignal();
      offParent();
      resolve(why);
    };
    const offSignal = onSignal(['SIGINT', 'SIGTERM'], stop);
    const offParent = whenParentGone(io.env, schedule, () => stop(PARENT_GONE));
    io.onReaderGone?.(() => stop(READER_GONE));
  });
}

/**
 * Run by npm (`npx svc-cli serve`, `npm run`, `npm exec`: npm sets
 * npm_lifecycle_event), svc's parent is npm, which does not pass a SIGTERM
 * on: `npx svc-cli serve --local & … kill $!` stopped npm and left the
 * server running, holding its --data lock. So there `listener` is called
 * once the parent is gone, which getppid() tells: svc is then another's
 * child. A look every half second costs one system call. Not elsewhere: a
 * server started by a shell (`svc serve --local &` in one CI step, used by
 * the next) may rightly outlive it.
 */
function whenParentGone(env: NodeJS.ProcessEnv, schedule: Deps['schedule'], listener: () => void): () => void {
  if (!readEnv(env, 'npm_lifecycle_event')) return () => {};
  const parent = process.ppid;
  let cancel = () => {};
  const look = () => {
    if (process.ppid !== parent) listener();
    else cancel = schedule(500, look);
  };
  cancel = schedule(500, look);
  return () => cancel();
}

/** The profile a bare `svc login` would write, when it already holds a key or points at a server other than this one. */
interface TakenProfile {
  name: string;
  hint: string | null;
  server: string;
}

/**
 * A second server (another port, another --data) must not take over the
 * profile svc uses now: `svc login` there would replace its key (and ask
 * first). The banner then suggests a profile of its own. The config is
 * only read, and one that cannot be read suggests nothing: the server
 * needs no home.
 */
async function profileTaken(io: IO, url: string): Promise<TakenProfile | null> {
  try {
    const { openConfig } = await import('../config/store.js');
    const config = openConfig(io.env, () => {});
    const name = readEnv(io.env, 'SVC_PROFILE') || config.defaultProfile() || 'default';
    const profile = config.getProfile(name);
    const hint = savedKeyHint(profile);
    const server = profile.baseUrl ?? DEFAULT_BASE_URL;
    if (hint === null && profile.baseUrl === undefined) return null;
    return sameServer(server, url) ? null : { name, hint, server };
  } catch {
    return null;
  }
}

function printBanner(log: Renderer, quiet: boolean, ready: LocalServerReady, options: ServeOptions, svc: string, taken: TakenProfile | null): void {
  const row = (label: string, ...value: Line[]): Line => [`  ${label.padEnd(10)} `, ...value.flat()];
  const lines: Line[] = [
    [tone('●', 'green'), ' svc reference server listening on ', tone(ready.url, 'bold')],
    row('plan', `${ready.plan} (${REQUESTS_PER_MINUTE[ready.plan]} requests per minute per workspace)`),
    row('state', options.data ? `${options.data} (key hashes only)` : 'in memory, gone when the server stops (--data <file> keeps it)'),
    ready.apiKey
      ? row('API key', tone(ready.apiKey, 'bold'), '  (shown only now)')
      : row('API key', `not shown: ${options.data} keeps only key hashes; use a key you saved earlier`),
    row('admin', `${ready.adminToken}  (Bearer token for ${ready.url}/_local/)`),
  ];
  const faults = describeFaults(options);
  if (faults) lines.push(row('faults', tone(`${faults} (on purpose, for testing)`, 'yellow')));
  log.info(...lines);
  if (quiet) return;
  // The next steps are commands that work where they will be typed: from a clone, svc is no command yet.
  const installed = svc === 'svc';
  // A profile of its own when the one in use is another server's: `--profile local-8788` on every step.
  const own = taken === null ? '' : ` --profile ${shellWord(`local-${new URL(ready.url).port || '80'}`)}`;
  // The key goes in on stdin, as svc login takes it: a key typed into a command line stays in the shell's history.
  const login = `  ${svc} login --with-key${own}${ready.url === DEFAULT_BASE_URL ? '' : ` --base-url ${ready.url}`}`;
  log.info(
    '',
    installed ? 'Next, in another terminal:' : `Next, in another terminal, in ${process.cwd()}:`,
    ...(ready.apiKey ? [login, tone('    (paste the API key above, then press Ctrl-D: read from stdin, it stays out of your shell history)', 'dim')] : []),
    ...(ready.url !== DEFAULT_BASE_URL && !ready.apiKey ? [`  export SVC_BASE_URL=${ready.url}`] : []),
    `  ${svc} status${own}`,
    `  ${svc} keys list${own}`,
    `  ${svc} keys create my-first-key${own}`,
    ...(taken === null
      ? []
      : [
          tone(
            `(a profile of its own: profile '${clip(taken.name, 200)}' ${taken.hint === null ? 'points at' : `holds key ${taken.hint} for`} ${taken.server}, and stays so)`,
            'dim',
          ),
        ]),
    ...(installed ? [] : [tone(`(svc is not installed as a command; README.md, "Install", says how. Until then, type ${svc}.)`, 'dim')]),
    '',
    tone('Ctrl-C stops the server.', 'dim'),
  );
}

/** The standing faults in words, or null when there are none. */
function describeFaults({ latency, failRate }: ServeOptions): string | null {
  const parts: string[] = [];
  if (latency && latency.maxMs > 0) {
    parts.push(`every API request delayed ${latency.minMs === latency.maxMs ? latency.minMs : `${latency.minMs}-${latency.maxMs}`} ms`);
  }
  if (failRate) parts.push(`${+(failRate * 100).toFixed(2)}% of API requests answered 502 or 503`);
  return parts.length === 0 ? null : parts.join('; ');
}
