import { Option, type Command } from 'commander';
import type { ChildEnd, RunningChild, startChild } from '../child/command.js';
import { cannotStart } from '../child/locate.js';
import { masking } from '../child/mask.js';
import { signalStatus, STOP_SIGNALS, watchSignals, type SignalWatch } from '../child/signals.js';
import { endLeftovers, supervise } from '../child/supervise.js';
import { parseDuration } from '../domain/duration.js';
import { CliError, PassedOnStatus, UsageError } from '../errors/errors.js';
import { checkKeyName } from '../domain/keys.js';
import {
  createEphemeralKey,
  DEFAULT_LIFETIME,
  ephemeralLifetime,
  MAX_LIFETIME,
  REAP_BOUND_MS,
  revokeEphemeralKey,
  SignalStop,
  type Guard,
  type Step,
} from '../operations/ephemeral.js';
import { MaybeCreatedError } from '../operations/maybe-created.js';
import type { Wanted } from '../domain/own-key.js';
import type { App } from '../program/program.js';
import { clip, shellWord } from '../text/text.js';
import { readEnv } from '../terminal/environment.js';
import { describeFailure } from '../views/failure.js';
import { withKey, type KeySession } from '../session/session.js';

export interface RunOptions {
  ephemeral?: string | true;
  name?: string;
  env?: string;
  grace?: string;
  /** False with --no-masking. */
  masking: boolean;
}

/**
 * How long a command has to end after a signal before svc kills it and
 * revokes its key: inside a CI runner's cancel window (GitHub Actions
 * sends SIGINT and waits 7.5 s before SIGTERM, Docker waits 10 s before
 * SIGKILL), with time left for the revoke.
 */
export const DEFAULT_GRACE = '5s';

/**
 * The least time the revoke of the command's key may wait for a rate
 * limit, --no-wait or a small --max-wait notwithstanding: a minute ends
 * any fixed window the service counts in.
 */
const REVOKE_WAIT_S = 60;

export function register(program: Command, app: App): void {
  program
    .command('run')
    .description("run a command with a key in its environment (SVC_API_KEY) and the server's address (SVC_BASE_URL)")
    .argument('<command...>', 'the command and its arguments, after --')
    .addOption(
      new Option('--ephemeral [duration]', `give the command a key of its own, expiring after the duration (default ${DEFAULT_LIFETIME}, at most ${MAX_LIFETIME}), revoked when it ends`),
    )
    .option('--name <name>', 'with --ephemeral: the new key\'s name (default: "run", the command\'s name, the time and a random suffix)')
    .option('--grace <duration>', `with --ephemeral: how long the command has to end after a signal before it is killed and its key revoked (default ${DEFAULT_GRACE})`)
    .option('--env <var>', 'the variable that holds the key (default: SVC_API_KEY)')
    .option('--no-masking', "pass the command's output on as it is, secret included, where svc would mask it")
    .addHelpText(
      'after',
      `\nThe command runs without a shell, in a process group of its own, with svc's environment less SVC_API_KEY, plus the key in SVC_API_KEY (or --env) and the server's address in SVC_BASE_URL. Where svc's stdout or stderr is no terminal (a CI log), or CI is set, the command's output on it passes through svc with the secret replaced by its hint; on a terminal the command writes to it itself. SIGINT, SIGTERM and SIGHUP go on to the command's process group, and svc then ends by the signal it got; Ctrl-Z stops the command with svc. svc prints no document of its own: stdout is the command's (with --json, svc's own failure is a document there only when the command printed nothing).\n\nWith --ephemeral the key is revoked when the command ends, however it ends: when it exits (what it left running in its process group is ended too); ${DEFAULT_GRACE} after a signal to svc (--grace), the command killed if it is still running; and if svc itself is killed, by svc's reaper, within ${REAP_BOUND_MS / 1000} s. svc exits with the command's status (128 + the signal's number when a signal ended it).\n\nExamples:\n  $ svc run -- ./deploy.sh production\n  $ svc run --ephemeral 30m -- npm test\n  $ svc run --ephemeral --env MEDIA_API_KEY -- python upload.py`,
    )
    .action(app.action('key', run));
}

export async function run(session: KeySession, words: string[], opts: RunOptions): Promise<void> {
  if (words[0] === '') throw new UsageError('The command to run is empty: svc run -- COMMAND [ARGS…]');
  const variable = checkVariable(opts.env ?? 'SVC_API_KEY');
  const lifetimeMs = opts.ephemeral === undefined ? null : ephemeralLifetime(opts.ephemeral);
  if (lifetimeMs === null && opts.name !== undefined) throw new UsageError('--name names the key that --ephemeral makes: give --ephemeral too.');
  if (lifetimeMs === null && opts.grace !== undefined) throw new UsageError('--grace is how long --ephemeral gives the command before its key is revoked: give --ephemeral too.');
  const graceMs = parseDuration(opts.grace ?? DEFAULT_GRACE);
  if (lifetimeMs !== null && graceMs >= lifetimeMs) throw new UsageError(`--grace ${clip(opts.grace!, 200)} is as long as the key lives: give the command less time than --ephemeral gives the key.`);
  const name = opts.name === undefined ? undefined : checkKeyName(opts.name);
  const env = (secret: string, keyId: string | null) => commandEnv(session.io.env, variable, secret, session.endpoint.url, keyId);
  // Before any key is made: a command that cannot start would cost a create and a revoke to find out.
  const unstartable = cannotStart(words[0]!, env('', null), session.io.cwd ?? process.cwd());
  if (unstartable) throw unstartable;
  // Loaded here, not with the command tree: child_process costs every other command its start-up time.
  const { startChild: spawnChild } = await import('../child/command.js');
  const signals = watchSignals(session.deps.onSignal);
  // The reader of svc's output going away would end svc at once (exit 141), leaving the key working:
  // instead the command's output stops being read, and the command meets the closed pipe itself.
  let stopPassing: (stream: 'stdout' | 'stderr') => void = () => {};
  const offReaderGone = session.io.onReaderGone?.((stream) => stopPassing(stream)) ?? (() => {});
  // A terminal a person reads takes the output as it is; a log (no terminal, or a terminal under CI: a runner's
  // pseudo-terminal) gets it through svc, masked, unless --no-masking.
  const watched = (isTTY: boolean) => isTTY && (!opts.masking || !readEnv(session.io.env, 'CI'));
  try {
    const start = (secret: string, keyId: string | null) => {
      // Before the command can print the key, or put it where a later step of the job prints it.
      session.render.handingOn(secret);
      const child = spawnChild({
        words,
        env: env(secret, keyId),
        stdout: watched(session.io.stdoutIsTTY) ? null : session.io.stdout,
        stderr: watched(session.io.stderrIsTTY) ? null : session.io.stderr,
        filter: opts.masking ? () => masking(secret, session.io.env) : null,
        schedule: session.deps.schedule,
      });
      stopPassing = child.stopPassing;
      return child;
    };
    if (lifetimeMs === null) {
      const { end, signal } = await supervise(start(session.credentials.apiKey, null), signals, { graceMs: null, jobControl: jobControl(session) });
      return await passOn(session, end, signal);
    }
    const { end, signal } = await withEphemeralKey(session, { name, lifetimeMs, command: words[0]!, graceMs }, signals, start);
    return await passOn(session, end, signal);
  } catch (error) {
    await sayOnStdoutIfStderrFailed(session, describeFailure(error, { verbose: false }).lines);
    throw error;
  } finally {
    offReaderGone();
    signals.off();
  }
}

/**
 * The job's key: made, handed to svc's reaper, given to the command, and
 * revoked however the command ended, with what the command left in its
 * process group ended at the same time. Resolves with how the command
 * ended (null when it was never started) and the first signal svc got.
 */
async function withEphemeralKey(
  session: KeySession,
  request: { name: string | undefined; lifetimeMs: number; command: string; graceMs: number },
  signals: SignalWatch,
  start: (secret: string, keyId: string) => ReturnType<typeof startChild>,
): Promise<{ end: ChildEnd | null; signal: NodeJS.Signals | null }> {
  const { deps } = session;
  const reaper = (deps.startReaper ?? (await import('../child/reaper.js')).startReaper)(
    { baseUrl: session.endpoint.url, apiKey: session.credentials.apiKey, origin: session.client.origin, timeoutMs: session.timeoutMs, svcPid: process.pid },
    withoutKey(session.io.env),
  );
  // Whether the reaper holds the key: unknown (null) until it says so, or until it is taken not to have started.
  let armed: boolean | null = reaper === null ? false : null;
  // The reaper is told "done" on every way out but one: a second signal during the revoke, which leaves the revoke to it.
  let leftToReaper = false;
  const guard = guarding(session, signals, () => armed !== false, (wanted) => reaper?.creating(wanted));
  try {
    const key = await createEphemeralKey(session.client, request, guard.run, deps.now).catch((error: unknown) => {
      // Stopped at once while the create was out or svc looked for what it made: the reaper, told of the create, looks on.
      leftToReaper = error instanceof SignalStop && reaper !== null;
      throw endedBy(error, guard.held());
    });
    const stoppedBy = guard.held();
    session.render.info(
      stoppedBy === null
        ? `Made key ${clip(key.id, 200)} for the command; it expires at ${key.expiresAt}.`
        : `Made key ${clip(key.id, 200)}; ${stoppedBy} came while it was made, so the command is not run and the key is revoked.`,
    );
    if (Math.abs(key.clockSkewMs) >= SKEW_SAID_MS) session.render.warn(skewed(key.clockSkewMs, key.expiresAt));
    // Not waited for: what svc tells the reaper waits in the socket while it starts, and it acts on it even if svc is gone by then.
    void (reaper?.arm(key) ?? Promise.resolve(false)).then((held) => {
      armed = held;
      if (!held) session.render.warn(`svc's reaper did not start: should svc be killed, the key works until ${key.expiresAt}.`);
    });
    reaper?.onGone(() => {
      armed = false;
      session.render.warn(`svc's reaper ended before the job did: should svc be killed now, the key works until ${key.expiresAt}.`);
    });
    let child: RunningChild | null = null;
    let supervised: Awaited<ReturnType<typeof supervise>> | null = null;
    try {
      if (guard.held() === null) {
        child = start(key.secret, key.id);
        if (child.pid !== undefined) reaper?.group(child.pid);
        supervised = await supervise(child, signals, {
          graceMs: request.graceMs,
          onGrace: (signal, ms) =>
            session.render.info(`${signal}: passed on to the command, which has ${seconds(ms)} to end before it is killed and its key revoked (a second signal kills it now).`),
          jobControl: jobControl(session),
        });
      }
    } finally {
      signals.route(guard.between);
      const grace = supervised?.killed ? 0 : request.graceMs;
      const leftovers =
        child === null
          ? Promise.resolve()
          : endLeftovers(child, grace, deps, () =>
              session.render.info(`The command left processes running: they have ${seconds(grace)} to end before they are killed.`),
            );
      try {
        await revokeEphemeralKey(await revokingClient(session), key, guard.run, deps.sleep);
        session.render.info(`Revoked key ${clip(key.id, 200)}.`);
      } catch (error) {
        leftToReaper = error instanceof SignalStop && armed !== false;
        throw error;
      } finally {
        await leftovers;
      }
    }
    return { end: supervised?.end ?? null, signal: supervised?.signal ?? guard.held() };
  } finally {
    if (!leftToReaper) await reaper?.done();
  }
}

/**
 * A failure of svc's own while it held a stop signal (one that came during
 * the create, or the look for what a lost one made): said as it is, and
 * svc then ends by the signal, as it would have had nothing failed.
 */
function endedBy(error: unknown, held: NodeJS.Signals | null): unknown {
  if (held === null || !(error instanceof CliError) || error.signal !== null) return error;
  if (error instanceof MaybeCreatedError) return error.stoppedBy(held);
  return new CliError(error.lines, signalStatus(held) as CliError['exitCode'], error, held);
}

/** A difference of clocks worth saying: the expiry svc prints is on the server's, and a person reads it on theirs. */
const SKEW_SAID_MS = 5 * 60_000;

function skewed(skewMs: number, expiresAt: string): string {
  const hours = Math.abs(skewMs) / 3_600_000;
  const apart = hours >= 1 ? `${hours.toFixed(1)} h` : `${Math.round(Math.abs(skewMs) / 60_000)} min`;
  return `The server's clock is ${apart} ${skewMs > 0 ? 'ahead of' : 'behind'} this machine's: ${expiresAt}, the key's expiry, is on the server's clock.`;
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/** Ctrl-Z where svc has a terminal: svc stops itself once it has stopped the job. */
function jobControl(session: KeySession): { onSignal: KeySession['deps']['onSignal']; stopSelf: () => void } | undefined {
  if (!session.io.stdinIsTTY) return undefined;
  return { onSignal: session.deps.onSignal, stopSelf: () => process.kill(process.pid, 'SIGSTOP') };
}

/**
 * svc's own requests under signals: one before anything is made stops
 * at once; during the create or the revoke the first is waited through
 * (the answer decides what becomes of the key) and a second stops at once,
 * naming what it leaves behind. The first is remembered: after the create,
 * the command is not started, and svc ends by it.
 */
function guarding(session: KeySession, signals: SignalWatch, reaperHolds: () => boolean, creating: (wanted: Wanted) => void) {
  let held: NodeJS.Signals | null = null;
  const between = (signal: NodeJS.Signals) => {
    held ??= signal;
  };
  const run: Guard = async (step, work) => {
    if (step.kind === 'create') creating(step.wanted);
    let stop!: (error: Error) => void;
    const stopped = new Promise<never>((_, reject) => (stop = reject));
    signals.route((signal) => {
      if (step.kind === 'clock') stop(new PassedOnStatus(signalStatus(signal), signal));
      else if (held === null) {
        held = signal;
        session.render.warn(waitingFor(step, signal));
      } else {
        // The request's progress line is its renderer's to clear once it ends, which it no longer will before svc says why it stopped.
        session.render.clearProgress();
        stop(new SignalStop(leftBehind(step, reaperHolds()), signalStatus(signal), signal));
      }
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
  if (step.kind === 'create') return `${signal}: waiting for the create's outcome, to revoke the key it makes; the command will not be run (a second signal stops at once).`;
  return `${signal}: waiting for the revoke of ${clip(step.key.id, 200)} to finish (a second signal stops at once).`;
}

function leftBehind(step: Exclude<Step, { kind: 'clock' }>, reaperHolds: boolean): string[] {
  if (step.kind === 'create') {
    const stopped = `Stopped while the create was out: a key named '${clip(step.name, 200)}' may have been made`;
    if (reaperHolds) return [`${stopped}; svc's reaper goes on looking for it, by the expiry svc drew for it (${step.expiresAt}), and revokes it.`];
    return [`${stopped}; it works until ${step.expiresAt} unless revoked.`, `Find it with \`svc keys list --name ${shellWord(step.name)}\` (its expiry is ${step.expiresAt}) and revoke it.`];
  }
  const { id, expiresAt } = step.key;
  if (reaperHolds) return [`Stopped while the key made for the command, ${clip(id, 200)}, was being revoked: svc's reaper goes on revoking it, for up to ${REAP_BOUND_MS / 1000} s.`];
  return [
    `Stopped while the key made for the command, ${clip(id, 200)}, was being revoked: it may still work, until ${expiresAt}.`,
    `See with \`svc keys view ${shellWord(id)}\`, and revoke it with \`svc keys revoke ${shellWord(id)}\` if it is not.`,
  ];
}

/**
 * The revoke comes after the command, however long it ran: its wait and
 * its timeout count from then, not from svc's start. It waits through a
 * rate limit for at least REVOKE_WAIT_S, --no-wait or not: a job's key is
 * not left working to save a minute.
 */
async function revokingClient(session: KeySession) {
  const maxWait = Math.max(session.options.maxWait, REVOKE_WAIT_S);
  const waitUntilMs = session.budgetNow() + maxWait * 1000;
  const options = { ...session.options, wait: true, maxWait };
  return (await withKey({ ...session, options, waitUntilMs, deadlineMs: waitUntilMs + session.timeoutMs }, session.credentials)).client;
}

/**
 * svc's exit status is the command's, unless svc got a stop signal, by
 * which it then ends; output svc lost is said, and fails a command that
 * otherwise succeeded.
 */
async function passOn(session: KeySession, end: ChildEnd | null, received: NodeJS.Signals | null): Promise<void> {
  const lost = (end?.lost ?? []).map(
    ({ stream, error }) => `svc could not write the command's ${stream} (${clip(error.message, 200)}): what the command printed there from then on is lost.`,
  );
  if (received !== null || end === null || end.signal !== null || end.code !== 0) {
    if (lost.length > 0) {
      session.render.warn(...lost);
      await sayOnStdoutIfStderrFailed(session, lost);
    }
    if (received !== null) throw new PassedOnStatus(signalStatus(received), received);
    if (end === null) return;
    if (end.signal !== null) throw new PassedOnStatus(signalStatus(end.signal), STOP_SIGNALS.includes(end.signal) ? end.signal : null);
    throw new PassedOnStatus(end.code ?? 1);
  }
  if (lost.length > 0) throw new CliError([...lost, 'The command itself exited 0; svc exits 1 for the output it lost.']);
}

/**
 * svc's own word on a job whose stderr failed (a CI log on a full disk):
 * the job's stdout is a log too, and may still take it. Known only once
 * svc wrote to stderr, which it does as it makes the key.
 */
async function sayOnStdoutIfStderrFailed(session: KeySession, lines: readonly string[]): Promise<void> {
  if (lines.length === 0 || (await session.io.stderrWritten?.()) == null) return;
  session.render.lines(lines.map((line) => (line.startsWith('svc ') ? line : `svc: ${line}`)));
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

/** svc's environment less the key svc uses, which reaches no process but through what svc decides to hand on. */
function withoutKey(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name, value]) => value !== undefined && name.toUpperCase() !== 'SVC_API_KEY'));
}

/**
 * svc's environment without SVC_API_KEY (the key svc itself uses is not the
 * command's unless it is the one handed over), with the key in `variable`
 * and the address in SVC_BASE_URL; with --ephemeral, the key's id in
 * SVC_EPHEMERAL_KEY_ID, so that an svc inside the job knows its key ends
 * with the job. Windows spells names in any case.
 */
function commandEnv(env: NodeJS.ProcessEnv, variable: string, secret: string, baseUrl: string, keyId: string | null): NodeJS.ProcessEnv {
  // Without --ephemeral an SVC_EPHEMERAL_KEY_ID svc was given stays: svc run inside an ephemeral job hands on that job's key.
  const replaced = new Set(['SVC_API_KEY', 'SVC_BASE_URL', variable.toUpperCase(), ...(keyId === null ? [] : ['SVC_EPHEMERAL_KEY_ID'])]);
  const kept = Object.entries(withoutKey(env)).filter(([name]) => !replaced.has(name.toUpperCase()));
  return { ...Object.fromEntries(kept), [variable]: secret, SVC_BASE_URL: baseUrl, ...(keyId === null ? {} : { SVC_EPHEMERAL_KEY_ID: keyId }) };
}
