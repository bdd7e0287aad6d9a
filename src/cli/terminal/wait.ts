import type { SettleWait, WaitEvent } from '../../client/api.js';
import { TransportError } from '../../client/errors.js';
import { isLoopbackHost } from '../../client/loopback.js';
import type { Transport } from '../../client/transport.js';
import type { Deps } from './deps.js';
import { InterruptedError, StoppedBeforeRetryError, STOPPING_SIGNALS } from '../errors/errors.js';
import type { IO } from './io.js';
import type { Renderer } from './renderer.js';
import { tone } from '../text/text.js';
import { readEnv } from './environment.js';

/**
 * Sleeps for the client's retry policy and tells the person why: a live
 * countdown on a terminal, one line in a log. When stopping loses nothing
 * (event.stoppable: no attempt so far can have done anything), SIGINT,
 * SIGTERM or SIGHUP ends the wait at once, on a terminal or off one,
 * whatever else listens for them (a create or a change to several keys,
 * which wait through a first signal for an answer): there is no answer to
 * wait for, only a sleep (StoppedBeforeRetryError). Otherwise the signal
 * is the command's to answer: the retry tells whether the change landed,
 * or the request is one svc must finish. The countdown's line
 * is cleared first, so the shell's prompt does not land after
 * "(Ctrl-C to stop)^C".
 */
export async function waitWithCountdown(
  render: Renderer,
  io: IO,
  event: WaitEvent,
  { now, sleep, onSignal }: Pick<Deps, 'now' | 'sleep' | 'onSignal'>,
): Promise<void> {
  if (event.reason === 'settle') return waitToLookAgain(render, io, event, { sleep, onSignal });
  let stoppedBy: NodeJS.Signals | null = null;
  let wake!: () => void;
  const woken = new Promise<void>((resolve) => (wake = resolve));
  const off = event.stoppable
    ? onSignal([...STOPPING_SIGNALS], (signal) => {
        stoppedBy ??= signal;
        wake();
      })
    : () => {};
  try {
    if (event.reason === 'backoff') {
      render.info(`Request failed (${event.cause}); retrying in ${(event.ms / 1000).toFixed(1)} s.`);
      await Promise.race([sleep(event.ms), woken]);
    } else if (!io.stderrIsTTY) {
      render.info(`Rate limited; retrying in ${Math.ceil(event.ms / 1000)} s.`);
      await Promise.race([sleep(event.ms), woken]);
    } else {
      await countDown(render, event.ms, now, (ms) => Promise.race([sleep(ms), woken]), () => stoppedBy !== null);
    }
  } finally {
    off();
  }
  if (stoppedBy) throw new StoppedBeforeRetryError(stoppedBy);
}

/** The rate-limit wait on a terminal, --quiet or not: its line counted down each second, until `ms` passed or `stopped`, then cleared. */
async function countDown(render: Renderer, ms: number, now: Deps['now'], nap: (ms: number) => Promise<unknown>, stopped: () => boolean): Promise<void> {
  try {
    const deadline = now() + ms;
    for (let left = deadline - now(); left > 0 && !stopped(); left = deadline - now()) {
      render.countdown([tone('Rate limited', 'yellow'), `: retrying in ${Math.ceil(left / 1000)} s (Ctrl-C to stop)`]);
      await nap(Math.min(left, ((left - 1) % 1000) + 1));
    }
  } finally {
    render.clearProgress();
  }
}

/**
 * The pause before svc looks again for the key a create whose answer was
 * lost may have made: on a terminal (not in CI) a progress line counts down
 * to the next look and says how long svc looks at most; in a log the first
 * pause says so once. A signal ends it early: the look stops there and says
 * what it found.
 */
async function waitToLookAgain(render: Renderer, io: IO, event: SettleWait, { sleep, onSignal }: Pick<Deps, 'sleep' | 'onSignal'>): Promise<void> {
  const live = io.stderrIsTTY && !readEnv(io.env, 'CI');
  if (!live && event.looks === 1) {
    render.info(`The create's answer was lost, so its outcome is unknown: svc looks for the key it may have made for up to ${Math.ceil(event.settlesInMs / 1000)} s more, until it must have settled; what failed follows.`);
  }
  let woken = false;
  let wake!: () => void;
  const signalled = new Promise<void>((resolve) => (wake = resolve));
  const off = onSignal(['SIGINT', 'SIGTERM', 'SIGHUP'], () => {
    woken = true;
    wake();
  });
  try {
    // Counted down by the sleeps themselves, a second at a time: a signal's wake leaves at most that much of a sleep behind.
    for (let left = event.ms; left > 0 && !woken; ) {
      const most = Math.ceil((event.settlesInMs - (event.ms - left)) / 1000);
      if (live) render.progress(`Waiting for the create to settle: next look in ${Math.ceil(left / 1000)} s, ${most} s at most (Ctrl-C stops)`);
      const step = ((left - 1) % 1000) + 1;
      await Promise.race([sleep(step), signalled]);
      left -= step;
    }
  } finally {
    off();
    if (live) render.clearProgress();
  }
}

/** A request that has not answered after this long gets a progress line on a terminal. */
export const PROGRESS_AFTER_MS = 300;

/**
 * `transport`, with every request that is out for longer than
 * PROGRESS_AFTER_MS shown on a terminal as "Waiting for <base URL> (3 s)",
 * counted each second and cleared once the request ends: a hung server is
 * a line that says what svc waits for, not a blank screen. Never on a
 * stderr that is not a terminal, nor in CI (the renderer draws progress
 * only on a terminal, and never with --quiet). Ctrl-C (or SIGTERM, SIGHUP)
 * while the line shows clears it and ends the command during a read (GET, HEAD),
 * which nothing is lost by cutting short. A change is not cut: its answer
 * says whether it landed (a revoke, a switch) or holds a new secret (a
 * create), so the caller decides what a Ctrl-C means (keys create, svc
 * api, a change to several keys that finishes the key in hand).
 */
export function showingWaits(
  transport: Transport,
  baseUrl: string,
  render: Renderer,
  io: IO,
  { now, schedule, onSignal }: Pick<Deps, 'now' | 'schedule' | 'onSignal'>,
): Transport {
  if (!io.stderrIsTTY || readEnv(io.env, 'CI')) return transport;
  return async (req) => {
    const started = now();
    let shown = false;
    let stopListening: (() => void) | undefined;
    let interrupt!: (error: Error) => void;
    const interrupted = new Promise<never>((_, reject) => (interrupt = reject));
    const tick = () => {
      const elapsed = now() - started;
      const seconds = Math.floor(elapsed / 1000);
      render.progress([`Waiting for ${baseUrl}`, seconds >= 1 ? ` (${seconds} s)` : '']);
      shown = true;
      if (!stopListening && (req.method === 'GET' || req.method === 'HEAD')) {
        stopListening = onSignal([...STOPPING_SIGNALS], (signal) => {
          cancel();
          if (shown) render.clearProgress();
          shown = false;
          interrupt(new InterruptedError(undefined, signal));
        });
      }
      cancel = schedule(1000 - (elapsed % 1000), tick);
    };
    let cancel = schedule(PROGRESS_AFTER_MS, tick);
    try {
      return await Promise.race([transport(req), interrupted]);
    } finally {
      cancel();
      stopListening?.();
      if (shown) render.clearProgress();
    }
  };
}

/**
 * A connection this machine refused is not retried (docs/contract.md §C4):
 * on loopback a refusal is the kernel's immediate answer that nothing
 * listens on the port, which backing off for 8 s does not change; it only
 * delays the message that says to start the server. A refusal from another
 * host may be a server restarting behind its balancer, and is retried as
 * any network error is.
 */
export function refusedHereIsFinal(transport: Transport): Transport {
  return async (req) => {
    try {
      return await transport(req);
    } catch (error) {
      if (error instanceof TransportError && !error.final && error.refused && isLoopbackHost(new URL(req.url).hostname)) {
        throw new TransportError(error.message, false, true, true);
      }
      throw error;
    }
  };
}
