/**
 * COMMAND under svc's signals (docs/contract.md §C10): each SIGINT, SIGTERM
 * or SIGHUP svc gets while COMMAND runs goes on to COMMAND's process
 * group. With a grace (--ephemeral, whose key must end with the job), the
 * first signal also starts it: once it has passed, or at a second signal,
 * the group is killed, so that a command that traps the signal cannot keep
 * the key for as long as it likes. Ctrl-Z stops the job with svc, and `fg`
 * or `bg` goes on with both: COMMAND has no terminal of its own to be
 * stopped by.
 */
import type { Deps } from '../terminal/deps.js';
import type { ChildEnd, RunningChild } from './command.js';
import type { SignalWatch } from './signals.js';

export interface Supervised {
  end: ChildEnd;
  /** The first stop signal svc got while COMMAND ran, if any: svc ends by it once it has done what it owes. */
  signal: NodeJS.Signals | null;
  /** The grace ran out, or a second signal came, and COMMAND's group was killed. */
  killed: boolean;
}

export interface Supervision {
  /** How long COMMAND has after the first signal before it is killed; null: as long as it takes. */
  graceMs: number | null;
  /** Told when the grace starts. */
  onGrace?: (signal: NodeJS.Signals, graceMs: number) => void;
  /** Where Ctrl-Z (SIGTSTP) and SIGCONT are heard, and how svc stops itself once COMMAND is stopped. */
  jobControl?: { onSignal: Deps['onSignal']; stopSelf: () => void };
}

export async function supervise(child: RunningChild, signals: SignalWatch, how: Supervision): Promise<Supervised> {
  const { graceMs } = how;
  let first: NodeJS.Signals | null = null;
  let killed = false;
  let timer: NodeJS.Timeout | undefined;
  const kill = () => {
    killed = true;
    child.signal('SIGKILL');
  };
  signals.route((signal) => {
    child.signal(signal);
    if (graceMs === null) {
      first ??= signal;
      return;
    }
    if (first !== null) return kill();
    first = signal;
    how.onGrace?.(signal, graceMs);
    // A real timer, kept alive: the grace is the command's time on the wall clock, and svc waits it out.
    timer = setTimeout(kill, graceMs);
  });
  const offJobControl =
    how.jobControl?.onSignal(['SIGTSTP', 'SIGCONT'], (signal) => {
      if (signal === 'SIGCONT') return child.signal('SIGCONT');
      child.signal('SIGSTOP');
      how.jobControl!.stopSelf();
    }) ?? (() => {});
  try {
    const end = await child.ended;
    return { end, signal: first, killed };
  } finally {
    clearTimeout(timer);
    offJobControl();
  }
}

/** How often svc looks whether what COMMAND left in its process group has gone, while it gives it the grace. */
const LOOK_MS = 50;

/** What is left is said once it has not ended this long after it was asked to: most of it ends at once. */
const SAY_AFTER_MS = 200;

/**
 * What COMMAND left running in its process group once COMMAND is over
 * (a child in the background): asked to stop (SIGTERM), given the grace,
 * then killed (at once, with no grace: a group the grace already ran out
 * for). Its key is revoked at the same time; nothing of the job is to
 * outlive it. `onWait` is told once when it does not end at once.
 * Resolves once the group is empty or was killed.
 */
export async function endLeftovers(
  child: RunningChild,
  graceMs: number,
  { sleep, now }: Pick<Deps, 'sleep' | 'now'>,
  onWait: () => void,
): Promise<void> {
  if (!child.groupAlive()) return;
  if (graceMs === 0) return child.signal('SIGKILL');
  child.signal('SIGTERM');
  const started = now();
  let told = false;
  while (child.groupAlive()) {
    if (now() - started >= graceMs) {
      child.signal('SIGKILL');
      return;
    }
    if (!told && now() - started >= SAY_AFTER_MS) {
      told = true;
      onWait();
    }
    await sleep(LOOK_MS);
  }
}
