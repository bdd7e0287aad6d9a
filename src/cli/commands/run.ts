import { Option, type Command } from 'commander';
import { keyHint } from '../../contract/key-format.js';
import type { ChildEnd, startChild } from '../child/command.js';
import { masking } from '../child/mask.js';
import { signalStatus, watchSignals, type SignalWatch } from '../child/signals.js';
import { PassedOnStatus, UsageError } from '../errors.js';
import { checkKeyName } from '../keys.js';
import {
  createEphemeralKey,
  DEFAULT_LIFETIME,
  ephemeralLifetime,
  MAX_LIFETIME,
  revokeEphemeralKey,
  SignalStop,
  type Guard,
  type Step,
} from '../operations/ephemeral.js';
import type { App } from '../program.js';
import { clip, shellWord } from '../render/text.js';
import { withKey, type KeySession } from '../session.js';

export interface RunOptions {
  ephemeral?: string | true;
  name?: string;
  env?: string;
  /** False with --no-masking. */
  masking: boolean;
}

export function register(program: Command, app: App): void {
  program
    .command('run')
    .description("run a command with a key in its environment (SVC_API_KEY) and the server's address (SVC_BASE_URL)")
    .argument('<command...>', 'the command and its arguments, after --')
    .addOption(
      new Option('--ephemeral [duration]', `give the command a key of its own, expiring after the duration (default ${DEFAULT_LIFETIME}, at most ${MAX_LIFETIME}), revoked when it ends`),
    )
    .option('--name <name>', 'with --ephemeral: the new key\'s name (default: "run", the command\'s name, the time and a random suffix)')
    .option('--env <var>', 'the variable that holds the key (default: SVC_API_KEY)')
    .option('--no-masking', "pass the command's output on as it is, secret included, where svc would mask it")
    .addHelpText(
      'after',
      '\nThe command runs without a shell, in a process group of its own, with svc\'s environment less SVC_API_KEY, plus the key in SVC_API_KEY (or --env) and the server\'s address in SVC_BASE_URL. Where svc\'s stdout or stderr is no terminal (a CI log), the command\'s output on it passes through svc with the secret replaced by its hint; on a terminal the command writes to it itself. SIGINT, SIGTERM and SIGHUP go on to the command\'s process group. With --ephemeral the key is revoked when the command ends, however it ends; if svc is killed, it expires. svc exits with the command\'s status (128 + the signal\'s number when a signal ended it).\n\nExamples:\n  $ svc run -- ./deploy.sh production\n  $ svc run --ephemeral 30m -- npm test\n  $ svc run --ephemeral --env MEDIA_API_KEY -- python upload.py',
    )
    .action(app.action('key', run));
}

export async function run(session: KeySession, words: string[], opts: RunOptions): Promise<void> {
  const variable = checkVariable(opts.env ?? 'SVC_API_KEY');
  const lifetimeMs = opts.ephemeral === undefined ? null : ephemeralLifetime(opts.ephemeral);
  if (lifetimeMs === null && opts.name !== undefined) throw new UsageError('--name names the key that --ephemeral makes: give --ephemeral too.');
  const name = opts.name === undefined ? undefined : checkKeyName(opts.name);
  // Loaded here, not with the command tree: child_process costs every other command its start-up time.
  const { startChild: spawnChild } = await import('../child/command.js');
  const signals = watchSignals(session.deps.onSignal);
  // The reader of svc's output going away would end svc at once (exit 141), leaving the key working:
  // instead the command's output stops being read, and the command meets the closed pipe itself.
  let stopPassing = () => {};
  const offReaderGone = session.io.onReaderGone?.(() => stopPassing()) ?? (() => {});
  try {
    const start = (secret: string) => {
      const child = spawnChild({
        words,
        env: commandEnv(session.io.env, variable, secret, session.endpoint.url),
        stdout: session.io.stdoutIsTTY ? null : session.io.stdout,
        stderr: session.io.stderrIsTTY ? null : session.io.stderr,
        filter: opts.masking ? () => masking(secret, keyHint(secret)) : null,
        schedule: session.deps.schedule,
      });
      stopPassing = child.stopPassing;
      return child;
    };
    if (lifetimeMs === null) return passOn(await whileRunning(signals, () => start(session.credentials.apiKey)));
    return passOn(await withEphemeralKey(session, { name, lifetimeMs, command: words[0]! }, signals, start));
  } finally {
    offReaderGone();
    signals.off();
  }
}

/**
 * Makes the key, runs the command with it unless a signal came first, and
 * revokes the key whatever happened in between. Resolves with how the
 * command ended; a signal before it started ends svc with 128 + its number.
 */
async function withEphemeralKey(
  session: KeySession,
  request: { name: string | undefined; lifetimeMs: number; command: string },
  signals: SignalWatch,
  start: (secret: string) => ReturnType<typeof startChild>,
): Promise<ChildEnd> {
  const guard = guarding(session, signals);
  const key = await createEphemeralKey(session.client, request, guard.run, session.deps.now);
  session.render.info(`Made key ${clip(key.id, 200)} for the command; it expires at ${key.expiresAt}.`);
  let end: ChildEnd | null = null;
  try {
    if (guard.held() === null) end = await whileRunning(signals, () => start(key.secret));
  } finally {
    signals.route(guard.between);
    await revokeEphemeralKey(await afterCommandClient(session), key, guard.run);
    session.render.info(`Revoked key ${clip(key.id, 200)}.`);
  }
  return end ?? { code: null, signal: guard.held() };
}

/** The command, started by `start`, with every signal svc gets forwarded to its process group until it ends. */
async function whileRunning(signals: SignalWatch, start: () => ReturnType<typeof startChild>): Promise<ChildEnd> {
  const child = start();
  signals.route((signal) => child.signal(signal));
  return child.ended;
}

/**
 * svc's own requests under signals: one before anything is made stops
 * at once; during the create or the revoke the first is waited through
 * (the answer decides what becomes of the key) and a second stops at once,
 * naming what it leaves behind. The first is remembered: after the create,
 * the command is not started.
 */
function guarding(session: KeySession, signals: SignalWatch) {
  let held: NodeJS.Signals | null = null;
  const between = (signal: NodeJS.Signals) => {
    held ??= signal;
  };
  const run: Guard = async (step, work) => {
    let stop!: (error: Error) => void;
    const stopped = new Promise<never>((_, reject) => (stop = reject));
    signals.route((signal) => {
      if (step.kind === 'clock') stop(new PassedOnStatus(signalStatus(signal)));
      else if (held === null) {
        held = signal;
        session.render.warn(waitingFor(step, signal));
      } else stop(new SignalStop(leftBehind(step), signalStatus(signal)));
    });
    try {
      return await Promise.race([work(), stopped]);
    } finally {
      signals.route(between);
    }
  };
  return { run, between, held: () => held };
}

function waitingFor(step: Exclude<Step, { kind: 'clock' }>, signal: NodeJS.Signals): string {
  if (step.kind === 'create') return `${signal}: waiting for the create's answer, to revoke the key it makes; the command will not be run (a second signal stops at once).`;
  return `${signal}: waiting for the revoke of ${clip(step.key.id, 200)} to finish (a second signal stops at once).`;
}

function leftBehind(step: Exclude<Step, { kind: 'clock' }>): string[] {
  if (step.kind === 'create') {
    return [
      `Stopped while the create was out: a key named '${clip(step.name, 200)}' may have been made; it works until ${step.expiresAt} unless revoked.`,
      `Find it with \`svc keys list --name ${shellWord(step.name)}\` and revoke it.`,
    ];
  }
  const { id, expiresAt } = step.key;
  return [
    `Stopped while the key made for the command, ${clip(id, 200)}, was being revoked: it may still work, until ${expiresAt}.`,
    `See with \`svc keys view ${shellWord(id)}\`, and revoke it with \`svc keys revoke ${shellWord(id)}\` if it is not.`,
  ];
}

/** The revoke comes after the command, however long it ran: --max-wait and --timeout count from then, not from svc's start. */
async function afterCommandClient(session: KeySession) {
  const waitUntilMs = session.deps.now() + session.options.maxWait * 1000;
  return (await withKey({ ...session, waitUntilMs, deadlineMs: waitUntilMs + session.timeoutMs }, session.credentials)).client;
}

/** svc's exit status is the command's: nothing to add when it succeeded, nothing to say when not. */
function passOn(end: ChildEnd): void {
  if (end.signal !== null) throw new PassedOnStatus(signalStatus(end.signal));
  if (end.code !== 0) throw new PassedOnStatus(end.code ?? 1);
}

/** Variables a command needs for its own running, found by name whatever their case (Windows). */
const RUNS_THE_COMMAND = new Set(['PATH', 'PATHEXT', 'HOME', 'USERPROFILE', 'SHELL', 'ENV', 'BASH_ENV', 'IFS', 'NODE_OPTIONS', 'TMPDIR', 'TEMP', 'TMP', 'COMSPEC', 'SYSTEMROOT']);

function checkVariable(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new UsageError(`--env ${clip(name, 200)} is no environment variable's name (letters, digits and _, not starting with a digit).`);
  if (name.toUpperCase() === 'SVC_BASE_URL') throw new UsageError("--env SVC_BASE_URL: that variable holds the server's address.");
  // The secret in one of these would be in every path looked up, every program's loader or shell start-up, and in their errors.
  if (RUNS_THE_COMMAND.has(name.toUpperCase()) || /^(LD|DYLD)_/i.test(name)) {
    throw new UsageError(`--env ${name}: the command, or what starts it, reads that variable for itself; give the key another name (default SVC_API_KEY).`);
  }
  return name;
}

/**
 * svc's environment without SVC_API_KEY (the key svc itself uses is not the
 * command's unless it is the one handed over), with the key in `variable`
 * and the address in SVC_BASE_URL. Windows spells names in any case.
 */
function commandEnv(env: NodeJS.ProcessEnv, variable: string, secret: string, baseUrl: string): NodeJS.ProcessEnv {
  const replaced = new Set(['SVC_API_KEY', 'SVC_BASE_URL', variable.toUpperCase()]);
  const kept = Object.entries(env).filter(([name, value]) => value !== undefined && !replaced.has(name.toUpperCase()));
  return { ...Object.fromEntries(kept), [variable]: secret, SVC_BASE_URL: baseUrl };
}
