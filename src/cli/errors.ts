/** Exit codes of docs/contract.md §C5. */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  unauthenticated: 3,
  notFound: 4,
  rateLimited: 5,
  interrupted: 130,
  /** The reader of stdout went away: what a shell reports for a process stopped by SIGPIPE (128 + 13). */
  brokenPipe: 141,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** An expected failure: its message is for the operator, never a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = ExitCode.failure,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export class UsageError extends CliError {
  constructor(message: string) {
    super(message, ExitCode.usage);
    this.name = 'UsageError';
  }
}

export class InterruptedError extends CliError {
  constructor() {
    super('Interrupted.', ExitCode.interrupted);
    this.name = 'InterruptedError';
  }
}

/**
 * Esc or Ctrl-C in a prompt: the question was withdrawn. A command ends as
 * if interrupted; the interactive session goes back to its menu
 * (docs/contract.md §C7).
 */
export class PromptCancelledError extends InterruptedError {
  constructor() {
    super();
    this.name = 'PromptCancelledError';
  }
}

/**
 * A create whose outcome is unknown (docs/contract.md §C4): the request may
 * have made a key whose secret nobody saw. Carries what the look for such
 * keys found; the report puts the cause first.
 */
export class MaybeCreatedError extends CliError {
  constructor(
    readonly cause: unknown,
    readonly findings: string[],
  ) {
    super(findings.join('\n'), ExitCode.failure);
    this.name = 'MaybeCreatedError';
  }
}

/** No key at all: says how to get one, for the profile in question. */
export class NotAuthenticatedError extends CliError {
  constructor(message: string, profile: string) {
    super(`${message}\nRun \`${loginCommand(profile)}\` to save a key, or set SVC_API_KEY.`, ExitCode.unauthenticated);
    this.name = 'NotAuthenticatedError';
  }
}

/** The login that saves a key to `profile`: `--profile` is named unless it is the default, quoted for a shell where need be. */
export function loginCommand(profile: string): string {
  if (profile === 'default') return 'svc login';
  return `svc login --profile ${/^[\w.@%+=:,/-]+$/.test(profile) ? profile : `'${profile.replace(/'/g, "'\\''")}'`}`;
}
