import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { isIPv6 } from 'node:net';
import type { Duplex } from 'node:stream';
import { IN_MEMORY_INSTANCE, PERSISTED_INSTANCE } from '../contract/headers.js';
import type { Plan } from '../contract/plans.js';
import type { LocalServerReady } from '../contract/types.js';
import { createApp } from './app.js';
import { Clock } from './clock.js';
import { claimDataFile, realDataFile } from './data-dir.js';
import { rawErrorResponse, send, type Reply } from './http.js';
import { FaultTable, type AmbientFaults } from './faults.js';
import { LateChanges } from './late-changes.js';
import { FixedWindowLimiter } from './limiter.js';
import type { DataFileLock } from './lock.js';
import { LockLostError, readState, StateFile, StateFileError, type SavedState, type StateFileOptions } from './persistence.js';
import { RequestLog } from './request-log.js';
import { SnapshotError } from './snapshot.js';
import { ServerStartError } from './start-error.js';
import { Store } from './store.js';

export { LockLostError, ServerStartError };

export interface ServerTimeouts {
  /** Longest wait for a request's headers: a client that trickles them (slowloris) is cut off. */
  headersMs: number;
  /** Longest wait for a whole request, body included. */
  requestMs: number;
  /** How long an idle keep-alive connection is kept. */
  keepAliveMs: number;
  /** On shutdown, how long in-flight requests may take before their connections are cut. */
  shutdownGraceMs: number;
}

export const DEFAULT_TIMEOUTS: ServerTimeouts = {
  headersMs: 10_000,
  requestMs: 30_000,
  keepAliveMs: 5_000,
  shutdownGraceMs: 10_000,
};

export interface ServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Plan of the bootstrap workspace; ignored when state is loaded from `dataFile`. */
  plan?: Plan;
  /** Load state from this file at start and save every mutation to it; memory only without. */
  dataFile?: string;
  /** The journal beside `dataFile` is compacted once larger than the snapshot and than this (1 MiB when absent); tests make it small. */
  compactAfterBytes?: number;
  /** Bearer token of the /_local admin area; random when absent. */
  adminToken?: string;
  timeouts?: Partial<ServerTimeouts>;
  /** Standing faults for every API request (`--latency`, `--fail-rate`); rules come and go through /_local/faults. */
  faults?: AmbientFaults;
  /** Keys in a page of the list (`--page-size`); 1,000 when absent. */
  pageSize?: number;
  /** What latency and the fail rate draw from; Math.random by default. */
  random?: () => number;
  /** Unexpected errors, stack included; stderr by default. */
  logError?: (error: unknown) => void;
  /** Trouble the operator must hear of that is no bug, such as a save that failed; one line each, stderr by default. */
  logWarning?: (message: string) => void;
}

export interface RunningServer {
  url: string;
  /** What `svc serve --local --json` prints; apiKey is null when state was loaded from a file. */
  ready: LocalServerReady;
  /**
   * Stops accepting, lets in-flight requests finish, saves what is unsaved
   * and releases the data file's lock. A failed last save is reported through
   * logWarning, not thrown: every acknowledged change is on disk already.
   * Rejects with a LockLostError when the lock was lost while it ran: the
   * changes refused since then are nowhere, which the exit status must say.
   */
  close(): Promise<void>;
}

const DONE = Promise.resolve();

/**
 * How often a server with --data checks that its lock is still its own, between
 * the checks before each save: a server that makes no change still says soon
 * that another may be using its file.
 */
const LOCK_CHECK_MS = 2_000;

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const logWarning = options.logWarning ?? ((message: string) => console.error(message));
  const dataFile = options.dataFile === undefined ? undefined : await realDataFile(options.dataFile);
  const lock =
    dataFile === undefined
      ? null
      : await claimDataFile(dataFile, (reason) =>
          logWarning(
            `lost the lock on ${dataFile}: ${reason}. Another server may be using ${dataFile} now, so this one makes no more changes ` +
              `(each is answered 503 and undone); reads go on. Stop this server, and start one again on ${dataFile}.`,
          ),
        );
  try {
    return await start({ ...options, dataFile }, lock, logWarning);
  } catch (error) {
    await lock?.release();
    throw error;
  }
}

async function start(options: ServerOptions, lock: DataFileLock | null, logWarning: (message: string) => void): Promise<RunningServer> {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const logError = options.logError ?? ((error: unknown) => console.error(error));
  const clock = new Clock();

  const saved = options.dataFile === undefined ? null : await load(options.dataFile);
  const store = saved ? loadStore(options.dataFile!, saved, clock) : new Store(clock);
  const plan = options.plan ?? 'free';
  let apiKey: string | null = null;
  if (!saved) {
    const { user } = store.createUser('Local user', plan);
    apiKey = store.createKey(user, 'bootstrap', null).secret;
  }
  // A new file holds the bootstrap key before anyone is told about it.
  const stateFile = options.dataFile === undefined ? null : await openStateFile(options.dataFile, store, saved, {
    warn: logWarning,
    verify: lock ? () => lock.verify() : undefined,
    compactAfterBytes: options.compactAfterBytes,
  });

  // Svc-Server-Instance (docs/contract.md §B): a server with --data is the same server on every start, since its first user is kept in
  // the file; one in memory is a new one each time, and the keys saved for the last one are gone.
  const instance = stateFile
    ? `${PERSISTED_INSTANCE}${createHash('sha256').update(store.primaryUser().id).digest('hex').slice(0, 16)}`
    : `${IN_MEMORY_INSTANCE}${randomBytes(8).toString('hex')}`;
  let closing = false;
  let url = '';
  const adminToken = options.adminToken ?? randomBytes(24).toString('base64url');
  const save = stateFile ? () => stateFile.save() : () => DONE;
  const limiter = new FixedWindowLimiter(() => clock.now());
  const faults = new FaultTable(options.faults, options.random);
  const requestLog = new RequestLog();
  const lateChanges = new LateChanges(clock);
  const readyDocument = (key: string | null): LocalServerReady => {
    const user = store.primaryUser();
    const workspace = store.workspace(user.activeWorkspaceId)!;
    return { url, apiKey: key, adminToken, userId: user.id, workspaceId: workspace.id, plan: workspace.plan };
  };
  // Requests a `hang` fault keeps unanswered: cut when the server stops, since they would never finish.
  const hanging = new Set<IncomingMessage>();
  const server = createServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      // Timeouts are only enforced when the connection list is checked; node's default of 30 s is too coarse.
      connectionsCheckingInterval: Math.min(1_000, timeouts.headersMs),
      // Node would answer a missing Host with an empty 400; let it through and answer in JSON.
      requireHostHeader: false,
    },
    createApp({
      store,
      clock,
      limiter,
      save,
      whenDurable: stateFile ? () => stateFile.whenDurable() : () => DONE,
      adminToken,
      faults,
      requestLog,
      lateChanges,
      async reset() {
        const { secret } = store.reset(plan);
        // Saved before it is acknowledged, like any change; a failed save brings the old world back and answers 503.
        await save();
        limiter.clear();
        faults.clear();
        lateChanges.drop();
        requestLog.clear();
        return readyDocument(secret);
      },
      hang(req) {
        hanging.add(req);
        req.socket.once('close', () => hanging.delete(req));
      },
      isClosing: () => closing,
      instance,
      logError,
      pageSize: options.pageSize,
    }),
  );
  // By default node ends its side as soon as the client half-closes, and an answer still being
  // prepared (a create waiting for its save) is lost. Half-open, node closes after that answer instead.
  (server as typeof server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  answerMalformedRequestsInJson(server);

  await listen(server, options.host, options.port);
  server.on('error', logError);
  const port = (server.address() as { port: number }).port;
  url = `http://${reachableHost(options.host)}:${port}`;
  // What it finds is told through the lock's own onLost; a check that cannot tell is tried again next time.
  const lockCheck = lock && setInterval(() => lock.verify().catch(() => {}), LOCK_CHECK_MS).unref();
  // After the ready line is out: a snapshot of a large state takes a while to make, and start-up need not wait for it.
  if (stateFile) setImmediate(() => stateFile.compactIfWanted());

  let closed: Promise<void> | undefined;
  return {
    url,
    ready: readyDocument(apiKey),
    close() {
      closed ??= (async () => {
        closing = true;
        lateChanges.drop();
        if (lockCheck) clearInterval(lockCheck);
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        for (const req of hanging) req.socket.destroy();
        const force = setTimeout(() => server.closeAllConnections(), timeouts.shutdownGraceMs);
        await stopped;
        clearTimeout(force);
        // A failure is reported by the state file itself, and what it could not save is only lastUsedAt.
        await stateFile?.flush().catch(() => {});
        // Checked once more, before the release removes the lock: it may have gone since the last check.
        const lost = await lock?.verify().then(
          () => null,
          (error: unknown) => (error instanceof LockLostError ? error : null),
        );
        await lock?.release();
        if (lost) {
          throw new LockLostError(
            `stopped without the lock on ${options.dataFile}: ${lost.message}. ` +
              'The changes acknowledged before that are in the file; those refused after it are not.',
          );
        }
      })();
      return closed;
    },
  };
}

/** The address a client on this machine uses: a wildcard bind is reached through loopback. */
function reachableHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '::0') return '[::1]';
  return isIPv6(host) ? `[${host}]` : host;
}

function loadStore(path: string, saved: SavedState, clock: Clock): Store {
  try {
    return Store.load(saved.state, clock);
  } catch (error) {
    if (error instanceof SnapshotError) {
      throw new ServerStartError(`${path} is not a valid svc state file: ${error.message}. The file was left untouched; repair or move it, or pick another --data file.`);
    }
    throw error;
  }
}

async function openStateFile(path: string, store: Store, saved: SavedState | null, options: StateFileOptions): Promise<StateFile> {
  try {
    return saved ? await StateFile.open(path, store, saved, options) : await StateFile.create(path, store, options);
  } catch (error) {
    if (error instanceof StateFileError) throw new ServerStartError(error.message);
    throw error;
  }
}

async function load(path: string) {
  try {
    return await readState(path);
  } catch (error) {
    if (error instanceof StateFileError) {
      throw new ServerStartError(`${error.message}. The file was left untouched; repair or move it, or pick another --data file.`);
    }
    throw error;
  }
}

function listen(server: ReturnType<typeof createServer>, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      reject(new ServerStartError(`cannot listen on ${host}:${port}: ${listenProblem(error)}`));
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

function listenProblem(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'EADDRINUSE':
      return 'the address is already in use (another svc serve?); choose another --port, or --port 0 for a free one';
    case 'EACCES':
      return 'permission denied (ports below 1024 need privileges); choose another --port';
    case 'EADDRNOTAVAIL':
      return 'that address does not belong to this machine; check --host';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name does not resolve; check --host';
    default:
      return error.message;
  }
}

/**
 * Node answers some broken requests itself, with empty or non-JSON bodies,
 * or drops the connection silently. These handlers keep the promise that
 * every answer is JSON, and the framing promises of docs/contract.md §B: every
 * complete request is answered before anything is said about the bytes
 * that follow it, and nothing follows an answer that said `Connection: close`.
 */
function answerMalformedRequestsInJson(server: ReturnType<typeof createServer>): void {
  // The newest exchange on each socket. Node answers pipelined requests in order,
  // so once this answer is finished, every earlier one on the socket is too.
  const newest = new WeakMap<Duplex, ServerResponse>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => newest.set(req.socket, res));
  // After its first error the parser reports one for every later chunk; the first decides.
  const broken = new WeakSet<Duplex>();

  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (broken.has(socket)) return;
    broken.add(socket);
    if (error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const reply = errorReply(error);
    const res = newest.get(socket);
    if (res && !res.headersSent && !res.req.complete) {
      // The request still arriving is the broken one: its own response object answers it, so node
      // queues the answer behind any earlier one still owed on this socket. Its handler still waits
      // for the body, and node never ends or aborts a request it stopped parsing: that is done here.
      send(res, reply, true);
      res.once('close', () => res.req.destroy());
      return;
    }
    if (res && !res.destroyed) {
      // Owed, or written but not yet through node's own end-of-response handling, which is what
      // ends the socket after `Connection: close` (writableFinished turns true before that runs).
      res.once('close', () => answerLast(socket, reply));
      return;
    }
    answerLast(socket, reply);
  });

  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.end(rawErrorResponse(405, 'METHOD_NOT_ALLOWED', 'Method not allowed: this is not a proxy'), () => socket.destroy());
  });

  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    newest.set(req.socket, res);
    send(res, { status: 417, body: { error: `Expectation failed: only 100-continue is supported, not "${req.headers.expect}"`, code: 'INVALID_REQUEST' } }, true);
  });
}

function errorReply(error: NodeJS.ErrnoException): Reply {
  const [status, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request header fields too large']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request timeout: the request took too long to arrive']
        : [400, 'Bad request: malformed HTTP'];
  return { status, body: { error: message, code: 'INVALID_REQUEST' } };
}

/**
 * The error answer for bytes that came after every complete request was
 * answered, then the end of the connection. A socket no longer writable is
 * being closed by node after an answer that said `Connection: close` (or is
 * gone): nothing more may be written on it.
 */
function answerLast(socket: Duplex, reply: Reply): void {
  if (!socket.writable) return;
  const { error, code } = reply.body as { error: string; code: 'INVALID_REQUEST' };
  socket.end(rawErrorResponse(reply.status, code, error), () => socket.destroy());
}
