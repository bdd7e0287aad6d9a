import { ApiError, IncompleteListError, NetworkError, RateLimitedError, UnexpectedResponseError, type RequestOrigin } from '../../client/errors.js';
import { BrokenPipeError, CliError, endingSignal, ExitCode, InterruptedError, loginCommand, PassedOnStatus, PromptCancelledError, signalExitCode } from '../errors/errors.js';
import { isLoopbackHost } from '../../client/loopback.js';
import { IN_MEMORY_INSTANCE } from '../../contract/headers.js';
import { API_PREFIX, apiPaths, DEFAULT_BASE_URL } from '../../contract/paths.js';
import { MaybeCreatedError, type OrphanFields } from '../operations/maybe-created.js';
import type { Renderer } from '../terminal/renderer.js';
import { clip, sanitize } from '../text/text.js';

/** The reference server's own port, as `svc serve --local` picks it. */
const DEFAULT_PORT = new URL(DEFAULT_BASE_URL).port;

/** Server text inside a line of svc's own; the renderer escapes it. */
const visible = (text: string) => clip(text, 200);

/** How much of an unexpected error to show; everything else a report says comes with the error itself. */
export interface ReportOptions {
  verbose: boolean;
  /** The key and server are on screen already (svc status's block): a 401 leaves out its lines naming them. */
  originShown?: boolean;
}

interface Report {
  exitCode: ExitCode;
  lines: string[];
}

/** Said after a create that may have reached the server, unless svc has looked itself (MaybeCreatedError). */
/** Said of a failure that no retry could mend (a certificate, TLS to a plain port). */
export const NOT_RETRIED = 'Not retried: trying again would fail the same way.';
const LOOK_AT_LIST = 'Run `svc keys list` to see whether it took effect before trying again.';

/** The one place an error becomes an operator message and an exit code. */
export function describeFailure(error: unknown, options: ReportOptions): Report {
  if (error instanceof MaybeCreatedError) {
    if (error.told) return { exitCode: error.exitCode, lines: [...error.lines] };
    const cause = describeFailure(error.cause, options).lines.filter((line) => line !== LOOK_AT_LIST);
    return { exitCode: error.exitCode, lines: [...cause, ...error.lines] };
  }
  if (error instanceof CliError) return { exitCode: error.exitCode, lines: [...error.lines] };
  if (error instanceof RateLimitedError) {
    const why =
      error.reason === 'no-wait'
        ? '--no-wait was given'
        : `waiting longer would pass --max-wait (${error.waitedSeconds} s waited already)`;
    return {
      exitCode: ExitCode.rateLimited,
      lines: [
        `Rate limited: this workspace has used its requests for the current minute; ${why}.`,
        error.reason === 'no-wait'
          ? `Try again ${retryWhen(error)}, or leave out --no-wait to wait for it.`
          : `Try again ${retryWhen(error)}, or raise --max-wait.`,
      ],
    };
  }
  if (error instanceof ApiError) return describeApiError(error, options.originShown === true);
  if (error instanceof NetworkError) {
    const where = error.origin ? ` ${error.origin.baseUrl}` : '';
    // A message may end in a sentence of its own (the certificate's hint): one full stop.
    const lines = [`Could not get an answer from${where}: ${error.message.replace(/\.$/, '')}.`, ...addressChosenByFile(error.origin)];
    const here = error.origin ? new URL(error.origin.baseUrl) : null;
    if (!error.mayHaveReachedServer && error.refused && here && isLoopbackHost(here.hostname)) {
      const port = here.port || (here.protocol === 'https:' ? '443' : '80');
      lines.push(
        'Is the server running? Nothing listens at that address on this machine (not retried: it would answer the same).',
        port === DEFAULT_PORT
          ? `\`svc serve --local\` starts the reference server there; if port ${DEFAULT_PORT} is taken, \`svc serve --local --port 0\` picks a free one: give its address to --base-url or SVC_BASE_URL.`
          : `\`svc serve --local --port ${port}\` starts the reference server there; or give the server's address to --base-url or SVC_BASE_URL.`,
      );
    } else if (error.final && !error.mayHaveReachedServer) {
      lines.push(NOT_RETRIED);
    } else if (error.method === 'POST' && error.mayHaveReachedServer) {
      lines.push(
        'The request may have reached the server, so it was not retried (a repeated create could leave a second live key).',
        LOOK_AT_LIST,
      );
    } else if (!error.mayHaveReachedServer) {
      lines.push('Is the server running? `svc serve --local` starts the reference server; --base-url or SVC_BASE_URL points elsewhere.');
    } else if (error.attempts > 1) {
      lines.push(`Gave up after ${error.attempts} attempts.`);
    }
    return { exitCode: ExitCode.failure, lines };
  }
  if (error instanceof IncompleteListError) {
    return { exitCode: ExitCode.failure, lines: [`${visible(error.message)}.`, 'svc stopped there, changing nothing; any keys printed above are only part of the list.'] };
  }
  if (error instanceof UnexpectedResponseError) {
    const why = error.garbled ? 'The answer says it is JSON and does not parse: a proxy or the network between svc and the service may have cut it short or garbled it.' : notTheService(error.origin);
    return { exitCode: ExitCode.failure, lines: [`Unexpected response: ${error.message}.`, why] };
  }
  const bug = error instanceof Error ? error : new Error(String(error));
  return {
    exitCode: ExitCode.failure,
    lines: [
      `Unexpected error: ${bug.message}`,
      ...(options.verbose && bug.stack ? bug.stack.split('\n').slice(1) : ['Run again with --verbose for details.']),
    ],
  };
}

/** Seconds for a wait a person sits through; beyond an hour (a server's Retry-After date far off), the time itself. */
function retryWhen({ retryAfterSeconds, retryAtMs }: RateLimitedError): string {
  const at = retryAtMs === null ? null : new Date(retryAtMs);
  // Past the year 9999 an ISO time has no four-digit year (or no value at all): the seconds are all there is to say.
  if (retryAfterSeconds <= 3600 || at === null || !(at.getUTCFullYear() <= 9999)) return `in ${retryAfterSeconds} s`;
  return `after ${at.toISOString()} (the server's Retry-After, ${Math.round(retryAfterSeconds / 3600)} h from now)`;
}

/**
 * The saved key's recorded expiry, when the 401 came after it on the
 * server's clock (a server whose clock is ahead of ours expires keys
 * earlier; one behind, later); null otherwise.
 */
function savedKeyExpired({ origin, serverNowMs }: ApiError): string | null {
  const expiresAt = origin?.keySource === 'profile' ? origin.savedKeyExpiresAt : null;
  if (!expiresAt || serverNowMs === null) return null;
  const at = Date.parse(expiresAt);
  return Number.isFinite(at) && at <= serverNowMs ? expiresAt : null;
}

function describeApiError(error: ApiError, originShown: boolean): Report {
  const serverText = error.body?.error || `HTTP ${error.status}`;
  const { origin } = error;
  if (error.status === 401) {
    const run = serverRun(error);
    const describeOrigin = originShown ? () => [] : originLines;
    if (run === 'restarted-in-memory') {
      return {
        exitCode: ExitCode.unauthenticated,
        lines: [
          `Authentication failed (401): ${visible(serverText)}.`,
          `The local server was restarted without --data; its keys are gone: \`${loginCommand(origin!.profile)}\` with the API key its banner printed.`,
          ...describeOrigin(origin!),
        ],
      };
    }
    const expiredAt = savedKeyExpired(error);
    if (expiredAt) {
      return {
        exitCode: ExitCode.unauthenticated,
        lines: [
          `Authentication failed (401): your saved key expired on ${whenExpired(expiredAt)}.`,
          ...describeOrigin(origin!),
          `Next: run \`${loginCommand(origin!.profile)}\` with a working key (create one where you still have access: an expired key cannot make or rotate one).`,
        ],
      };
    }
    return {
      exitCode: ExitCode.unauthenticated,
      lines: [
        `Authentication failed (401): ${visible(serverText)}.`,
        // A page (a login form, a proxy's own) is no word from the service on the key: something in front of it may have answered.
        error.foreignBody !== null
          ? `The answer was ${visible(error.foreignBody)}, not the service's JSON: a proxy or a login page in front of the service may have refused it, or the key is unknown, disabled, expired or revoked.`
          : 'The key is unknown, disabled, expired or revoked.',
        ...(origin ? describeOrigin(origin) : []),
        ...(run === 'changed' ? [OTHER_RUN] : []),
        origin?.keySource === 'env'
          ? 'Next: put a working key in SVC_API_KEY, or unset it to use the saved profile.'
          : `Next: run \`${loginCommand(origin?.profile ?? 'default')}\` with a working key (create one where you still have access; a key that is only disabled can be enabled there again, a revoked or expired one cannot).`,
      ],
    };
  }
  const code = error.code ? ` ${visible(error.code)}` : '';
  const where = `${error.method} ${API_PREFIX}${error.path}`;
  if (error.status >= 300 && error.status < 400) {
    return {
      exitCode: ExitCode.failure,
      lines: [
        `${where} answered ${error.status}, a redirect to ${error.location === null ? 'no address (no Location header)' : visible(error.location)}.`,
        'svc does not follow redirects, so that a key never goes to a second address. If that is the service, make its address the base URL (--base-url, SVC_BASE_URL or `svc login`).',
      ],
    };
  }
  if (error.status === 403) {
    // A refusal, whoever made it: the service's own (with its JSON) or a gateway's page; retrying changes nothing.
    return {
      exitCode: ExitCode.forbidden,
      lines: [
        error.foreignBody !== null
          ? `${where} was refused (403) by the server or a proxy in front of it, answered with ${visible(error.foreignBody)} rather than the service's JSON.`
          : error.body === null
            ? `${where} was refused (403${code}).`
            : `${where} was refused (403${code}): ${visible(serverText)}`,
        ...detailLines(error.details),
        'Trying again will not change it: the key may not make this request (its workspace or plan), or a gateway or firewall in front of the service blocks it.',
      ],
    };
  }
  if (error.status === 413) {
    // A proxy's limit is often far below the service's (nginx's client_max_body_size is 1 MiB), and its page is HTML: not a sign of the wrong address.
    const said = error.foreignBody !== null ? `, answered with ${visible(error.foreignBody)}` : error.body === null ? '' : `: ${visible(serverText)}`;
    return {
      exitCode: ExitCode.usage,
      lines: [
        `${where}: the server or a proxy in front of it refused the request as too large (413${code})${said}.`,
        'Send a smaller body; if it was small, the limit is a proxy\'s, which its operators set.',
      ],
    };
  }
  if (error.foreignBody !== null && error.status >= 500) {
    // A server error page (the service's own, or a proxy's in front of it) says the server failed, not that the address is wrong.
    return {
      exitCode: ExitCode.failure,
      lines: [
        `${where} failed with a server error (${error.status}), answered with ${visible(error.foreignBody)} rather than the service's JSON: the service or a proxy in front of it is failing.`,
        error.method === 'POST' ? LOOK_AT_LIST : 'Try again later; if it persists, tell the service\'s operators.',
      ],
    };
  }
  if (error.foreignBody !== null) {
    return {
      exitCode: ExitCode.failure,
      lines: [`${where} answered ${error.status} with ${visible(error.foreignBody)}, not the service's JSON.`, notTheService(origin)],
    };
  }
  if ((error.status === 404 || error.status === 405) && COLLECTIONS.has(error.path)) {
    return {
      exitCode: ExitCode.failure,
      lines: [
        `The server${origin ? ` at ${origin.baseUrl}` : ''} does not offer ${where} (${error.status}${code}): ${visible(serverText)}`,
        'It may use another path for this; `svc api` calls any path below /api/service (see `svc api --help`).',
      ],
    };
  }
  // A 400 or 422 (and a 413, above) refuses what was sent, and what svc sends comes from the command line (docs/contract.md §C5).
  const exitCode = error.status === 404 ? ExitCode.notFound : error.status === 400 || error.status === 422 ? ExitCode.usage : ExitCode.failure;
  return {
    exitCode,
    lines: [`${error.method} ${visible(error.path)} failed (${error.status}${code}): ${visible(serverText)}`, ...detailLines(error.details)],
  };
}

/** Details shown below the message: enough to act on, never a screenful (a server may send hundreds). */
const SHOWN_DETAILS = 5;

function detailLines(details: readonly string[]): string[] {
  const lines = details.slice(0, SHOWN_DETAILS).map((detail) => `  - ${visible(detail)}`);
  if (details.length > SHOWN_DETAILS) lines.push(`  (and ${details.length - SHOWN_DETAILS} more)`);
  return lines;
}

/**
 * svc's own endpoints that are not about one key: a 404 or 405 there means
 * the server lacks the endpoint, not that a key is missing (docs/contract.md §C6).
 */
const COLLECTIONS = new Set<string>([apiPaths.keys, apiPaths.workspace]);

/**
 * Said of a 401 for a saved key when another run of the reference server
 * answered than the one it was saved with, one that keeps its keys in a
 * --data file: not the file the key was made in.
 */
const OTHER_RUN =
  'The server was restarted since this key was saved, with other state (another --data file, or none before): it does not hold the keys of the run before.';

/**
 * What a 401 says of the server's run (docs/contract.md §B,
 * Svc-Server-Instance): the run the profile's key was saved with answered
 * (`same`: the key was not lost to a restart), a run that keeps its keys in
 * memory replaced it (`restarted-in-memory`: the key is gone with the old
 * run), another run replaced it (`changed`), or svc cannot tell (no run
 * recorded at login, a key from SVC_API_KEY, no header in the answer), when
 * nothing is said of a restart: a key refused by the run it was made on is
 * told so plainly, not sent looking for a restart that never happened.
 */
function serverRun(error: ApiError): 'same' | 'restarted-in-memory' | 'changed' | 'unknown' {
  const saved = error.origin?.keySource === 'profile' ? error.origin.savedInstance : null;
  const answered = error.serverInstance;
  if (!saved || !answered) return 'unknown';
  if (saved === answered) return 'same';
  return answered.startsWith(IN_MEMORY_INSTANCE) ? 'restarted-in-memory' : 'changed';
}

/** "2026-11-20 14:05 UTC": an expiry to the minute, in the one zone every reader shares. */
function whenExpired(iso: string): string {
  return `${new Date(iso).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** The key and server lines of a 401: which key, from where, sent where. */
function originLines(origin: RequestOrigin): string[] {
  const source =
    origin.keySource === 'env'
      ? 'from the SVC_API_KEY environment variable'
      : origin.keySource === 'login'
        ? '(the key given to svc login; nothing was saved)'
        : `from profile '${visible(origin.profile)}' in the config store`;
  const lines = [`  key:    ${origin.keyHint} ${source}`, `  server: ${origin.baseUrl}`];
  if (origin.profileFile && (origin.keySource === 'profile' || origin.baseUrlSource === 'profile')) lines.push(`          (profile '${visible(origin.profile)}' was chosen by ${visible(origin.profileFile)})`);
  if (origin.overriddenBaseUrl !== null) {
    const by = origin.baseUrlSource === 'flag' ? '--base-url' : 'SVC_BASE_URL';
    lines.push(`          (from ${by}; profile '${visible(origin.profile)}' is saved for ${origin.overriddenBaseUrl})`);
  }
  return lines;
}

/** The line saying that a project's `.svc-profile` chose the profile whose address this is, when one did. */
function addressChosenByFile(origin: RequestOrigin | null): string[] {
  return origin?.profileFile && origin.baseUrlSource === 'profile' ? [`That is the address of profile '${visible(origin.profile)}', which ${visible(origin.profileFile)} chose.`] : [];
}

function notTheService(origin: RequestOrigin | null): string {
  const chosen = origin?.profileFile && origin.baseUrlSource === 'profile' ? ` (here by profile '${visible(origin.profile)}', which ${visible(origin.profileFile)} chose)` : '';
  return `Is ${origin?.baseUrl ?? 'the base URL'} the service's address? It is set with --base-url, SVC_BASE_URL or \`svc login\`${chosen}.`;
}

/**
 * A failure as `--json` prints it, the one document on stdout
 * (docs/cli-error.schema.json): `message` is what stderr says, server
 * text escaped as there (docs/contract.md §C3); `status`, `code`,
 * `details` and `body` are those of the server's answer that made the failure, when
 * one did; `retryAfter` and `retryAt`, for a rate limit svc did not wait out, when
 * to try again; `answer` is a create's answer svc could not read, which may hold
 * the only copy of a secret; `orphans` and `candidates`, for a create whose
 * outcome is unknown, the keys it made and those svc cannot tell from its own.
 */
export interface FailureDocument {
  error: {
    message: string;
    exitCode: number;
    status?: number;
    code?: string;
    details?: readonly string[];
    body?: unknown;
    retryAfter?: number;
    retryAt?: string;
    answer?: string;
  } & Partial<OrphanFields>;
}

export function failureDocument(error: unknown, report: Report): FailureDocument {
  const answer = error instanceof MaybeCreatedError ? error.answer : null;
  return {
    error: {
      message: report.lines.map(sanitize).join('\n'),
      exitCode: report.exitCode,
      ...serverAnswer(error),
      ...(answer === null ? {} : { answer }),
      // As the server gave them, for a script to act on: the document's writer escapes what a terminal would obey (docs/contract.md §C3).
      ...(error instanceof MaybeCreatedError ? error.fields() : {}),
    },
  };
}

/** A Retry-After of centuries is the server's to send, but its time has no RFC 3339 form (year 10000 on): `retryAfter` alone says it. */
const LAST_FOUR_DIGIT_YEAR_MS = Date.UTC(10000, 0, 1);

/** The server's answer behind a failure: the first ApiError (or rate limit, a 429) down its chain of causes. */
function serverAnswer(error: unknown): Pick<FailureDocument['error'], 'status' | 'code' | 'details' | 'body' | 'retryAfter' | 'retryAt'> {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 10; cause = cause.cause, depth++) {
    if (cause instanceof RateLimitedError) {
      return {
        status: 429,
        ...(cause.code === null ? {} : { code: cause.code }),
        retryAfter: cause.retryAfterSeconds,
        ...(cause.retryAtMs !== null && cause.retryAtMs < LAST_FOUR_DIGIT_YEAR_MS ? { retryAt: new Date(cause.retryAtMs).toISOString() } : {}),
      };
    }
    if (cause instanceof ApiError) {
      return {
        status: cause.status,
        ...(cause.code === undefined ? {} : { code: cause.code }),
        ...(cause.details.length === 0 ? {} : { details: cause.details }),
        ...(cause.document === undefined ? {} : { body: cause.document }),
      };
    }
  }
  return {};
}

/** How the failure is to be reported, beyond what the error says. */
export interface FailureOutput extends ReportOptions {
  /** `--json` was given: the failure is also one document on stdout, unless stdout already holds the command's own. */
  json?: { stdoutUsed: boolean };
  /** The failure's lines were printed already (commander's usage errors): only the document is left. */
  said?: boolean;
  /** A stop signal svc held while the work in hand finished, and that work failed: svc ends by it. */
  held?: NodeJS.Signals | null;
}

/** How svc's process is to end: its exit code, or the signal it dies by (whose status a shell shows as 128 + its number, the exit code). */
export interface Ending {
  exitCode: number;
  signal: NodeJS.Signals | null;
}

/**
 * The one place a failure reaches the person: its lines on stderr, after
 * whatever it carries for stdout (a create's unreadable answer, which may
 * hold the only copy of a secret). An interruption with nothing to say
 * prints nothing; a declined confirmation says what was not done, as a
 * message rather than an error. With `--json` and stdout still empty, stdout gets the
 * failure's document, the answer inside it; a command that printed its
 * document before failing (a list with `incomplete`, a prune's or an
 * audit's report, a rotation's new key) keeps it as the one (docs/contract.md §C3).
 * Returns how svc ends: by the signal that stopped the command, if one did
 * (bin/svc.js re-raises it once the output is flushed), else with the exit code.
 */
export function reportFailure(error: unknown, options: FailureOutput, render: Renderer): Ending {
  // svc run's COMMAND ended so: its status is passed on, and it is not svc's failure to describe; svc run answers its own signals.
  if (error instanceof PassedOnStatus) return { exitCode: error.exitCode, signal: endingSignal(error) };
  const described = describeFailure(error, options);
  const signal = endingSignal(error) ?? options.held ?? null;
  const report = signal === null ? described : { ...described, exitCode: signalExitCode(signal) };
  const ending = { exitCode: report.exitCode, signal };
  const answer = error instanceof MaybeCreatedError ? error.answer : null;
  const brokenPipe = error instanceof BrokenPipeError;
  if (options.json && !options.json.stdoutUsed && !brokenPipe) render.failureJson(failureDocument(error, report));
  else if (answer !== null) render.lines(answer.replace(/\n$/, '').split('\n'));
  if (options.said || (error instanceof InterruptedError && error.silent) || brokenPipe) return ending;
  // A declined confirmation is the person's choice, told as such: no "error:" before it.
  if (error instanceof PromptCancelledError) render.info(...report.lines);
  else render.failure(report.lines);
  return ending;
}

/**
 * docs/contract.md §C5: for a command whose exit 1 is its own finding (`keys
 * audit`: the policy is broken; `scan`: a live key), what is exit 1 for any
 * other command is 6, "the `what` did not finish"; every other code stays.
 */
export function asUnfinished(error: unknown, verbose: boolean, what: string): unknown {
  const { exitCode, lines } = describeFailure(error, { verbose });
  if (exitCode !== ExitCode.failure) return error;
  return new CliError([...lines, `The ${what} did not finish (exit 6).`], ExitCode.unfinished, error);
}
