/**
 * The signals `svc run` answers (docs/contract.md §C10), from before its
 * first request to its exit: Ctrl-C, SIGTERM and SIGHUP alike, since each
 * would otherwise end svc with the key it made still working.
 */
import { constants } from 'node:os';
import type { Deps } from '../terminal/deps.js';

export const STOP_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** 128 + the signal's number: the status a shell reports for a process that signal ended. */
export function signalStatus(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}

export interface SignalWatch {
  /** From now on each signal goes to `to`, until the next call. */
  route(to: (signal: NodeJS.Signals) => void): void;
  off(): void;
}

export function watchSignals(onSignal: Deps['onSignal']): SignalWatch {
  let handler: (signal: NodeJS.Signals) => void = () => {};
  const off = onSignal(STOP_SIGNALS, (signal) => handler(signal));
  return {
    route(to) {
      handler = to;
    },
    off,
  };
}
