import type { Transport } from '../../client/transport.js';
import type { RequestOrigin } from '../../client/errors.js';
import type { Wanted } from '../domain/own-key.js';
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

/** What the reaper needs to revoke a key as svc would: the server, svc's own key and who svc is. */
export interface ReaperServer {
  baseUrl: string;
  apiKey: string;
  origin: RequestOrigin;
  timeoutMs: number;
  svcPid: number;
}

export interface ReaperKey {
  id: string;
  secret: string;
  name: string;
  expiresAt: string;
}

export type ReaperOrder = { server: ReaperServer } | { creating: Wanted } | { key: ReaperKey } | { group: number } | { done: true };

export interface Reaper {
  /** The create about to go out: should svc end before its answer, the reaper looks for the key it made, by its marks. */
  creating(wanted: Wanted): void;
  /**
   * Hands over the key; true once the reaper holds it (or svc was done
   * first, when it no longer matters), false when it did not say so within
   * ARM_WAIT_MS: it did not start.
   */
  arm(key: ReaperKey): Promise<boolean>;
  /** COMMAND's process group. */
  group(pid: number): void;
  /** svc is done with the key: the reaper ends without doing anything. Resolves once that was sent. */
  done(): Promise<void>;
  /** Tells `listener` if the reaper, once it held the key, ends before svc is done (it was killed): svc is then on its own. */
  onGone(listener: () => void): void;
}
