/**
 * `svc __reap`, hidden: svc's reaper (src/cli/child/reaper.ts), started by
 * `svc run --ephemeral`. It reads its orders from the socket on fd 3 until
 * svc closes it. "done" first: svc did all itself, and the reaper ends.
 * Closed before that (svc was killed): it kills COMMAND's process group,
 * revokes the key within REAP_BOUND_MS, and says so on the stderr it shares
 * with svc, where a CI log still takes it.
 */
import { Socket } from 'node:net';
import type { Command } from 'commander';
import type { ApiClient } from '../../client/api.js';
import { DEFAULT_POLICY } from '../../client/policy.js';
import type { ReaperKey, ReaperOrder, ReaperServer } from '../child/reaper.js';
import { CliError } from '../errors.js';
import { REAP_BOUND_MS, revokeEphemeralKey, unguarded } from '../operations/ephemeral.js';
import type { App } from '../program.js';
import { clip } from '../render/text.js';
import { proxySettings, type Session } from '../session.js';

export function register(program: Command, app: App): void {
  program.command('__reap', { hidden: true }).action(app.action('nothing', run));
}

interface Orders {
  server: ReaperServer | null;
  key: ReaperKey | null;
  group: number | null;
  done: boolean;
}

export async function run(session: Session): Promise<void> {
  const orders = await readOrders(new Socket({ fd: 3, readable: true, writable: true }));
  if (orders.done || orders.server === null) return;
  const lines = await reap(orders as Orders & { server: ReaperServer }, session);
  session.render.warn(...lines);
}

/** Every order until svc closes the socket; "armed" goes back once the key is held. */
function readOrders(socket: Socket): Promise<Orders> {
  const orders: Orders = { server: null, key: null, group: null, done: false };
  let pending = '';
  return new Promise((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n')) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 1);
        let order: ReaperOrder;
        try {
          order = JSON.parse(line) as ReaperOrder;
        } catch {
          continue;
        }
        if ('server' in order) orders.server = order.server;
        else if ('key' in order) {
          orders.key = order.key;
          socket.write('armed\n');
        } else if ('group' in order) orders.group = order.group;
        else if ('done' in order) orders.done = true;
      }
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => resolve(orders));
  });
}

/** What svc left, ended; the lines that say so. */
async function reap(orders: Orders & { server: ReaperServer }, session: Session): Promise<string[]> {
  const { server, key, group } = orders;
  const lines = [`svc (pid ${server.svcPid}) ended before it was done with its command.`];
  if (group !== null) {
    try {
      process.kill(-group, 'SIGKILL');
      lines.push(`Its command's process group (${group}) is killed.`);
    } catch {
      // Nothing left in it.
    }
  }
  if (key === null) return lines;
  try {
    await revokeEphemeralKey(await reaperClient(server, session), key, unguarded, session.deps.sleep);
    lines.push(`The key made for the command, ${clip(key.id, 200)}, is revoked.`);
  } catch (error) {
    lines.push(...(error instanceof CliError ? error.lines : [`The key made for the command, ${clip(key.id, 200)}, could not be revoked: ${clip((error as Error).message, 200)}.`]));
  }
  return lines;
}

/** svc's client as svc's session had it, within the reaper's bound: the proxies and CAs come with the environment svc passed on. */
async function reaperClient(server: ReaperServer, session: Session): Promise<ApiClient> {
  const [{ ApiClient }, { createUndiciTransport }] = await Promise.all([import('../../client/api.js'), import('../../client/transport.js')]);
  const { deps, io } = session;
  const until = deps.now() + REAP_BOUND_MS;
  return new ApiClient({
    baseUrl: server.baseUrl,
    apiKey: server.apiKey,
    timeoutMs: Math.min(server.timeoutMs, REAP_BOUND_MS),
    deadlineMs: until,
    waitUntilMs: until,
    policy: { ...DEFAULT_POLICY, maxWaitSeconds: REAP_BOUND_MS / 1000 },
    transport: deps.transport ?? createUndiciTransport({ proxy: proxySettings(io.env) }),
    userAgent: `svc/${SVC_VERSION} node/${process.versions.node}`,
    wait: (event) => deps.sleep(event.ms),
    now: deps.now,
    random: deps.random,
    origin: server.origin,
  });
}
