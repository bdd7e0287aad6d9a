import type { Transport } from '../client/transport.js';
import type { Prompter } from './prompt.js';

/**
 * What svc takes from the world besides its terminal: how requests go out,
 * what time it is, how it waits, its randomness and who answers prompts.
 * bin/ passes none of them; tests pass a scripted transport, a fake clock
 * and sleep, and scripted answers, and run any command in-process.
 */
export interface Deps {
  /** Every request of the command; by default undici, through the environment's proxies. */
  transport?: Transport;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  /** In [0, 1): backoff and rate-limit jitter. */
  random: () => number;
  /** By default, inquirer's prompts on the terminal's stdin and stderr. */
  prompter?: Prompter;
}

export const realDeps: Deps = {
  now: () => Date.now(),
  sleep: (ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
};
