import type { WaitEvent } from '../client/api.js';
import type { Deps } from './deps.js';
import type { IO } from './io.js';
import type { Messages } from './output.js';

/**
 * Sleeps for the client's retry policy and tells the person why: a live
 * countdown on a terminal, one line in a log.
 */
export async function waitWithCountdown(io: IO, msg: Messages, event: WaitEvent, { now, sleep }: Pick<Deps, 'now' | 'sleep'>): Promise<void> {
  if (event.reason === 'backoff') {
    msg.info(`Request failed (${event.cause}); retrying in ${(event.ms / 1000).toFixed(1)} s.`);
    await sleep(event.ms);
    return;
  }
  if (!io.stderrIsTTY) {
    msg.info(`Rate limited; retrying in ${Math.ceil(event.ms / 1000)} s.`);
    await sleep(event.ms);
    return;
  }
  const deadline = now() + event.ms;
  for (let left = deadline - now(); left > 0; left = deadline - now()) {
    msg.progress(`${msg.style.yellow('Rate limited')}: retrying in ${Math.ceil(left / 1000)} s (Ctrl-C to stop)`);
    await sleep(Math.min(left, ((left - 1) % 1000) + 1));
  }
  msg.clearProgress();
}
