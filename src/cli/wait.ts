import type { WaitEvent } from '../client/api.js';
import type { Deps } from './deps.js';
import { InterruptedError } from './errors.js';
import type { IO } from './io.js';
import type { Renderer } from './render/renderer.js';
import { tone } from './render/text.js';

/**
 * Sleeps for the client's retry policy and tells the person why: a live
 * countdown on a terminal, one line in a log. Ctrl-C during the countdown
 * clears its line first, so the shell's prompt does not land after
 * "(Ctrl-C to stop)^C", then ends the command as interrupted.
 */
export async function waitWithCountdown(
  render: Renderer,
  io: IO,
  event: WaitEvent,
  { now, sleep, onSignal }: Pick<Deps, 'now' | 'sleep' | 'onSignal'>,
): Promise<void> {
  if (event.reason === 'backoff') {
    render.info(`Request failed (${event.cause}); retrying in ${(event.ms / 1000).toFixed(1)} s.`);
    await sleep(event.ms);
    return;
  }
  if (!io.stderrIsTTY) {
    render.info(`Rate limited; retrying in ${Math.ceil(event.ms / 1000)} s.`);
    await sleep(event.ms);
    return;
  }
  let interrupted = false;
  let wake!: () => void;
  const woken = new Promise<void>((resolve) => (wake = resolve));
  const off = onSignal(['SIGINT'], () => {
    interrupted = true;
    wake();
  });
  try {
    const deadline = now() + event.ms;
    for (let left = deadline - now(); left > 0 && !interrupted; left = deadline - now()) {
      render.progress([tone('Rate limited', 'yellow'), `: retrying in ${Math.ceil(left / 1000)} s (Ctrl-C to stop)`]);
      await Promise.race([sleep(Math.min(left, ((left - 1) % 1000) + 1)), woken]);
    }
  } finally {
    off();
    render.clearProgress();
  }
  if (interrupted) throw new InterruptedError();
}
