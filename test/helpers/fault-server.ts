import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FaultServer {
  url: string;
  /** Requests seen, as "METHOD /path". */
  seen: string[];
  close(): Promise<void>;
}

/** A tiny server on loopback for what the reference server cannot be made to do (a redirect, a 200 that is not JSON); faults it can make are set on it through /_local/faults (test/helpers/reference-faults.ts). */
export async function startFaultServer(handle: (req: IncomingMessage, res: ServerResponse, n: number) => void): Promise<FaultServer> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    handle(req, res, seen.length);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** A port that was just free: connecting to it is refused. */
export async function refusedUrl(): Promise<string> {
  const probe = await startFaultServer(() => {});
  await probe.close();
  return probe.url;
}
