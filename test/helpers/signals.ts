/**
 * svc's signals, faked for an in-process run: the signals `when` returns for
 * a request are delivered to svc's listeners as that request goes out (to
 * the server, for real), so a test stops a command at a chosen request
 * without timing anything.
 */
import type { Deps } from '../../src/cli/terminal/deps.js';
import { createUndiciTransport, type HttpRequest, type Transport } from '../../src/client/transport.js';

export function signalsAt(when: (req: HttpRequest) => NodeJS.Signals[]): Pick<Deps, 'onSignal' | 'transport'> {
  const listeners = new Set<(signal: NodeJS.Signals) => void>();
  const real = createUndiciTransport();
  const transport: Transport = (req) => {
    const answer = real(req);
    for (const signal of when(req)) for (const listener of [...listeners]) listener(signal);
    return answer;
  };
  return {
    transport,
    onSignal(_signals, listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** The signals delivered as the `nth` request with `method` goes out. */
export function atNth(method: string, nth: number, signals: NodeJS.Signals[]): (req: HttpRequest) => NodeJS.Signals[] {
  let seen = 0;
  return (req) => (req.method === method && ++seen === nth ? signals : []);
}
