import { clip, shellWord } from '../text/text.js';

/** Exit codes of docs/contract.md §C5. */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  unauthenticated: 3,
  notFound: 4,
  rateLimited: 5,
  /** `svc keys audit` or `svc scan` could not finish: what is 1 elsewhere, since there 1 means the policy is broken, or a live key was found. */
  unfinished: 6,
  /** `svc scan` found keys, and none of them is live. */
  scanKeysNotLive: 7,
  /** `svc scan` found keys, none known to be live, some not checked. */
  scanKeysNotChecked: 8,
  /** A 403: the server (or a gateway in front of it) refused this key the request; told apart from 1 so that a script does not retry a refusal as it would the network. */
  forbidden: 9,
  /** A signal stopped the command: 128 + its number, as a shell reports a process it killed (SIGINT 130). */
  hangUp: 129,
  interrupted: 130,
  terminated: 143,
  /** The reader of stdout went away: what a shell reports for a process stopped by SIGPIPE (128 + 13). */
  brokenPipe: 141,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * An expected failure: its lines are for the operator, never a stack trace.
 * Each line is one line on screen: text from a server inside one cannot
 * start another (the renderer escapes its newlines).
 */
export class CliError extends Error {
  readonly lines: readonly string[];

  /**
   * `cause`: the failure this one explains, whose server answer --json's
   * document still reports (views/failure.ts). `signal`: the signal that stopped
   * the command, when one did; svc then ends by it once this is reported
   * (endingSignal), so that a shell loop around svc stops too.
   */
  constructor(
    message: string | readonly string[],
    readonly exitCode: ExitCode = ExitCode.failure,
    cause?: unknown,
    readonly signal: NodeJS.Signals | null = null,
  ) {
    const lines = typeof message === 'string' ? [message] : message;
    super(lines.join('\n'), cause === undefined ? undefined : { cause });
    this.lines = lines;
    this.name = 'CliError';
  }
}

/**
 * A write to stdout failed for a reason other than a reader that went away
 * (EPIPE exits 141 in bin/svc.js): a full disk, /dev/full, an I/O error.
 */
export class OutputError extends CliError {
  constructor(readonly writeError: Error) {
    super(`Could not write to stdout: ${clip(writeError.message, 200)}; what svc printed there is incomplete.`);
    this.name = 'OutputError';
  }
}

/**
 * A new key's secret could not be written: it is lost, so its key goes.
 * `revoked` says what became of the key: revoked by svc, or why it could
 * not be (the person is then told to); undefined before svc tried.
 */
export class SecretNotWrittenError extends CliError {
  /** `before`: what failed first, when printing was the fallback (a delivery). */
  constructor(
    readonly id: string | null,
    readonly writeError: Error,
    readonly before: readonly string[] = [],
    readonly revoked?: true | { why: string },
    /** The signal that came while svc revoked the key: the exit code is its. */
    signal: NodeJS.Signals | null = null,
  ) {
    const lost = `The new key${id === null ? '' : ` ${clip(id, 200)}`} was created, but its secret could not be written to stdout (${clip(writeError.message, 200)}): the secret is lost`;
    super(
      [
        ...before,
        ...(revoked === true
          ? [`${lost} (svc keeps no copy), so svc revoked the key.`]
          : [
              `${lost}, and svc keeps no copy.`,
              ...(revoked === undefined ? [] : [`svc could not revoke the key: ${clip(revoked.why, 200)}.`]),
              id === null ? 'Revoke the new key: find it with `svc keys list`, then `svc keys revoke <id>`.' : `Revoke it: svc keys revoke ${shellWord(id)}`,
            ]),
      ],
      signal === null ? ExitCode.failure : signalExitCode(signal),
      undefined,
      signal,
    );
    this.name = 'SecretNotWrittenError';
  }

  /** The same failure, once svc tried to revoke the key (and `signal` came meanwhile). */
  tried(revoked: true | { why: string }, signal: NodeJS.Signals | null = null): SecretNotWrittenError {
    return new SecretNotWrittenError(this.id, this.writeError, this.before, revoked, signal);
  }
}

export class UsageError extends CliError {
  constructor(message: string | readonly string[]) {
    super(message, ExitCode.usage);
    this.name = 'UsageError';
  }
}

/** The reader of svc's output went away and svc stopped cleanly for it (svc serve): exit 141, and no one left to tell. */
export class BrokenPipeError extends CliError {
  constructor() {
    super('The reader of the output went away.', ExitCode.brokenPipe);
    this.name = 'BrokenPipeError';
  }
}

/** The signals svc stops on, and the exit code of each: 128 + its number, whichever path the command was on. */
const SIGNAL_EXIT: Partial<Record<NodeJS.Signals, ExitCode>> = { SIGHUP: ExitCode.hangUp, SIGINT: ExitCode.interrupted, SIGTERM: ExitCode.terminated };

/** SIGINT, SIGTERM and SIGHUP: what asks svc to stop (and what svc, once stopped, ends by: endingSignal). */
export const STOPPING_SIGNALS = Object.keys(SIGNAL_EXIT) as readonly NodeJS.Signals[];

export function signalExitCode(signal: NodeJS.Signals): ExitCode {
  return SIGNAL_EXIT[signal] ?? ExitCode.interrupted;
}

/**
 * The signal svc ends by once `error` is reported: the one that stopped the
 * command, when it is one svc stops on (docs/contract.md §C5). Another
 * signal a failure carries (one that ended `svc run`'s COMMAND: SIGKILL,
 * SIGSEGV) is passed on as its status only: svc re-raising it would be a
 * crash of svc's own, with a core dump.
 */
export function endingSignal(error: unknown): NodeJS.Signals | null {
  const signal = error instanceof CliError ? error.signal : null;
  return signal !== null && Object.hasOwn(SIGNAL_EXIT, signal) ? signal : null;
}

/** What --json's document says of a command a signal stopped with nothing else to say. */
export function stoppedBeforeDone(signal: NodeJS.Signals): string {
  return `Stopped by ${signal} before the command was done.`;
}

/**
 * Ctrl-C (or SIGTERM, SIGHUP): exit 128 + the signal's number, and nothing
 * said unless there is something the person must know (what was done before
 * it). `signal` null: no signal, a question withdrawn (exit 130 all the same).
 */
export class InterruptedError extends CliError {
  readonly silent: boolean;

  constructor(lines?: readonly string[], signal: NodeJS.Signals | null = 'SIGINT') {
    super(lines ?? (signal === null ? 'Interrupted.' : stoppedBeforeDone(signal)), signal === null ? ExitCode.interrupted : signalExitCode(signal), undefined, signal);
    this.silent = lines === undefined;
    this.name = 'InterruptedError';
  }
}

/**
 * A signal during the wait before a request was tried again, when no
 * attempt so far can have done anything (a read; a change refused with a
 * 429, or that never reached the server): the request was given up at once.
 */
export class StoppedBeforeRetryError extends InterruptedError {
  declare readonly signal: NodeJS.Signals;

  constructor(signal: NodeJS.Signals) {
    super(undefined, signal);
    this.name = 'StoppedBeforeRetryError';
  }
}

/**
 * An exit status passed on with nothing to say: `svc run`'s COMMAND's own
 * (128 + n when a signal ended it, `signal` that one), or a signal's that
 * stopped svc before COMMAND started (`signal` that one).
 */
export class PassedOnStatus extends CliError {
  constructor(status: number, signal: NodeJS.Signals | null = null) {
    super([], status as ExitCode, undefined, signal);
    this.name = 'PassedOnStatus';
  }
}

/**
 * Esc or Ctrl-C in a prompt: the question was withdrawn. A command ends as
 * if interrupted; the interactive session goes back to its menu
 * (docs/contract.md §C7). `lines`: what was not done, when a confirmation
 * was declined (dialogs/confirm.ts). `signal` is SIGINT for Ctrl-C: in the
 * prompt's raw mode it is a key, not a signal, but the person meant what a
 * Ctrl-C means, so svc ends by SIGINT; Esc and a No are answers (null).
 */
export class PromptCancelledError extends InterruptedError {
  constructor(lines?: readonly string[], signal: NodeJS.Signals | null = null) {
    super(lines, signal);
    this.name = 'PromptCancelledError';
  }
}

/**
 * The one wording of a profile that holds no key, wherever svc says so (an
 * error, `status`, `logout`): one state, one sentence, so that a person who
 * meets it twice knows it is the same thing.
 */
export function notLoggedIn(profile: string): string {
  return `Not logged in: no API key for profile '${clip(profile, 200)}'`;
}

/** No key at all: says how to get one, for the profile in question. */
export class NotAuthenticatedError extends CliError {
  /** `emptyEnvKey`: SVC_API_KEY is set, to nothing, as in a CI job that was given no secret (a fork's pull request). */
  constructor(profile: string, emptyEnvKey = false) {
    super(
      emptyEnvKey
        ? [
            `${notLoggedIn(profile)}, and SVC_API_KEY is set but empty (a CI job given no secret, such as a pull request from a fork, gets it so).`,
            `Set SVC_API_KEY to a key, or run \`${loginCommand(profile)}\` to save one.`,
          ]
        : [`${notLoggedIn(profile)}.`, `Run \`${loginCommand(profile)}\` to save a key, or set SVC_API_KEY.`],
      ExitCode.unauthenticated,
    );
    this.name = 'NotAuthenticatedError';
  }
}

/**
 * A profile that is not in the config file (named by --profile,
 * SVC_PROFILE or the config's default): there is no key there, and the
 * message lists the profiles that do exist. Exit 3, as for any profile
 * without a key.
 */
export class UnknownProfileError extends CliError {
  /** @param others what there is instead ("the profiles are: …. Did you mean …?"), for where the message is told in parts (status). */
  constructor(
    lines: readonly string[],
    readonly others?: string,
  ) {
    super(lines, ExitCode.unauthenticated);
    this.name = 'UnknownProfileError';
  }
}

/** The login that saves a key to `profile`: `--profile` is named unless it is the default, quoted for a shell where need be. */
export function loginCommand(profile: string): string {
  if (profile === 'default') return 'svc login';
  return `svc login --profile ${shellWord(profile)}`;
}

/** The command that revokes a key, for messages. */
export function revokeCommand(id: string | null): string {
  return id === null ? 'find its id with `svc keys list`, then `svc keys revoke <id>`' : `svc keys revoke ${shellWord(id)}`;
}
