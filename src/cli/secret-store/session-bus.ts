/**
 * Whether the D-Bus session bus answers, asked on Linux before the keyring
 * library is used. The library, with its entries pinned to the Secret
 * Service (keyring.ts), already never falls back to the kernel keyring,
 * refuses a bus with no Secret Service on it in a few ms, and starts one by
 * D-Bus activation; what it lacks is a bound on the bus itself. Its
 * constructor speaks to the bus synchronously, so a bus that accepts a
 * connection and never answers holds the event loop, and svc's 3 s bound
 * with it: measured with @napi-rs/keyring 2.1.2, `new AsyncEntry(…)`
 * pinned to the Secret Service, DBUS_SESSION_BUS_ADDRESS naming a unix
 * socket that accepts and stays silent, had not returned when `timeout 60`
 * killed it, where this check gives up at svc's bound. It also names the
 * address that does not answer, where the library only says that a
 * socket could not be reached.
 *
 * It takes the first step of any D-Bus client: connect, and the SASL
 * exchange a live bus answers at once (the bus's own daemon answers it).
 * What it costs: `svc keys list` of a keyring profile on a bus with no
 * Secret Service (dbus-daemon with no service files), hyperfine -N -r 30,
 * environment of PATH and HOME only, next to `node -e 0` (85 ms of CPU):
 * 202 ms of CPU to fail with this check, 188 ms with none (the library
 * alone), on Node 20.20.2; 248 and 236 ms on Node 24.22.3.
 */
import { createConnection, type Socket } from 'node:net';

/** Why the session bus cannot be used, in words for the person at the terminal. */
export class NoSessionBus extends Error {
  constructor(readonly problem: string) {
    super(problem);
    this.name = 'NoSessionBus';
  }
}

/**
 * Resolves once the bus at `address` (DBUS_SESSION_BUS_ADDRESS) has
 * accepted svc; rejects with NoSessionBus otherwise. `signal` ends the wait
 * (the caller's bound).
 */
export async function checkSessionBus(address: string | undefined, signal: AbortSignal): Promise<void> {
  if (!address) throw new NoSessionBus('no D-Bus session bus: DBUS_SESSION_BUS_ADDRESS is not set');
  const socket = await connect(socketPath(address), address, signal);
  try {
    // SASL EXTERNAL: the bus knows the caller's uid from the socket; svc only names it.
    socket.write(`\0AUTH EXTERNAL ${Buffer.from(String(process.getuid?.() ?? 0)).toString('hex')}\r\n`);
    const line = await firstLine(socket, signal);
    if (!line.startsWith('OK ')) throw new NoSessionBus(`the D-Bus session bus refused svc (${line.slice(0, 80)})`);
  } finally {
    socket.destroy();
  }
}

/** The socket of the first unix address (`unix:path=` or `unix:abstract=`, values %-escaped) in the list. */
function socketPath(address: string): string {
  for (const entry of address.split(';')) {
    const [transport, rest = ''] = entry.split(/:(.*)/s, 2);
    if (transport !== 'unix') continue;
    const keys = new Map(rest.split(',').map((pair) => pair.split(/=(.*)/s, 2) as [string, string]));
    const path = keys.get('path');
    if (path) return decodeURIComponent(path);
    const abstract = keys.get('abstract');
    if (abstract) return `\0${decodeURIComponent(abstract)}`;
  }
  throw new NoSessionBus(`svc reaches the D-Bus session bus over a unix socket, and DBUS_SESSION_BUS_ADDRESS names none (${address})`);
}

function connect(path: string, address: string, signal: AbortSignal): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ path, signal });
    socket.once('connect', () => {
      socket.off('error', failed);
      resolve(socket);
    });
    const failed = (error: NodeJS.ErrnoException) => {
      socket.destroy();
      reject(error.name === 'AbortError' ? error : new NoSessionBus(`no D-Bus session bus answers at ${address} (${error.code ?? error.message})`));
    };
    socket.once('error', failed);
  });
}

/** The first line the bus sends, without its CRLF. */
function firstLine(socket: Socket, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    const done = (settle: () => void) => {
      socket.off('data', data).off('close', closed).off('error', closed);
      signal.removeEventListener('abort', aborted);
      settle();
    };
    const data = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n');
      if (end >= 0) done(() => resolve(received.subarray(0, end).toString('latin1')));
    };
    const closed = () => done(() => reject(new NoSessionBus('the D-Bus session bus closed the connection')));
    const aborted = () => done(() => reject(signal.reason));
    socket.on('data', data).on('close', closed).on('error', closed);
    signal.addEventListener('abort', aborted, { once: true });
  });
}
