/**
 * Which signals svc itself holds now: those a command listens for through
 * realDeps.onSignal, to shut down cleanly or to finish the answer in hand.
 * Signals are the process's, so this is the process's too, the one piece
 * of the CLI's state kept at module level; nothing imports it but svc's
 * own subscription (deps.ts), the process's IO (io.ts) and bin/svc.js's
 * default handler (through main.ts).
 */

/** How many of svc's own listeners each signal has now. */
const held = new Map<NodeJS.Signals, number>();

/** One more (1) or one fewer (-1) of svc's own listeners for `signal`. */
export function hold(signal: NodeJS.Signals, by: 1 | -1): void {
  held.set(signal, (held.get(signal) ?? 0) + by);
}

/**
 * Whether svc itself listens for `signal` now (a command that shuts down
 * cleanly, or waits for an answer that holds a secret): bin/svc.js's
 * default handler then leaves the signal to it. Listeners of a library's
 * (the prompts' signal-exit) do not count: at a prompt, SIGTERM still ends svc.
 */
export function holdsSignal(signal: NodeJS.Signals): boolean {
  return (held.get(signal) ?? 0) > 0;
}
