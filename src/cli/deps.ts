import type { Transport } from '../client/transport.js';
import type { Reaper, ReaperServer } from './child/reaper.js';
import type { Prompter } from './prompt.js';
import { hold } from './held-signals.js';

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
  /**
   * Runs `run` once after `ms` on the real clock, unless the returned
   * function cancels it first; never keeps the process alive. What a person
   * sees while a request is out (the progress line of a slow request) is
   * drawn by it.
   */
  schedule: (ms: number, run: () => void) => () => void;
  /** In [0, 1): backoff and rate-limit jitter. */
  random: () => number;
  /** Who answers the questions; by default, inquirer's prompts on the terminal's stdin and stderr. What is asked is escaped either way (prompt.ts). */
  prompter?: Prompter;
  /**
   * Starts svc run's reaper, the process that ends the job should svc be
   * killed (child/reaper.ts); by default a real one. Tests in-process,
   * which start no process, pass one that records what it is told.
   */
  startReaper?: (server: ReaperServer, env: NodeJS.ProcessEnv) => Reaper | null;
  /** Subscribes to the process's signals (Ctrl-C, `kill`); returns the unsubscribe. */
  onSignal: (signals: NodeJS.Signals[], listener: (signal: NodeJS.Signals) => void) => () => void;
}

export const realDeps: Deps = {
  now: () => Date.now(),
  sleep: (ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
  schedule(ms, run) {
    const timer = setTimeout(run, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
  random: Math.random,
  onSignal(signals, listener) {
    for (const signal of signals) {
      process.on(signal, listener);
      hold(signal, 1);
    }
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      for (const signal of signals) {
        process.off(signal, listener);
        hold(signal, -1);
      }
    };
  },
};
