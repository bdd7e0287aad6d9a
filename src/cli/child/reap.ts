/**
 * What svc's reaper does once svc has ended before it was done with its
 * job (docs/contract.md §C10): COMMAND's process group killed, the key
 * made for it revoked within REAP_BOUND_MS, and both said on the stderr it
 * shares with svc, where a CI log still takes it. bin/reap.js waits for
 * svc's orders and loads this only then.
 */
import type { ApiClient } from '../../client/api.js';
import { DEFAULT_POLICY } from '../../client/policy.js';
import { realDeps, type Deps } from '../terminal/deps.js';
import { CliError, revokeCommand } from '../errors/errors.js';
import type { IO } from '../terminal/io.js';
import { REAP_BOUND_MS, revokeEphemeralKey, unguarded } from '../operations/ephemeral.js';
import { GATEWAY_MS, lookForOrphans } from '../operations/look-for-orphans.js';
import { createRenderer } from '../terminal/renderer.js';
import { clip, shellWord } from '../text/text.js';
import type { Wanted } from '../domain/own-key.js';
import { proxySettings } from '../session/session.js';
import type { ReaperKey, ReaperServer } from '../terminal/deps.js';
import { jobAlive, signalJob } from './session.js';

export interface Leftovers {
  server: ReaperServer;
  /** The create that was out, when svc ended before its answer told the key (then `key` is null). */
  creating: Wanted | null;
  key: ReaperKey | null;
  group: number | null;
}

export async function reap(left: Leftovers, io: IO, deps: Deps = realDeps): Promise<void> {
  const { server, creating, key, group } = left;
  const lines = [
    key === null && creating !== null
      ? `svc run's reaper: svc (pid ${server.svcPid}) ended while it was making its command's key.`
      : `svc run's reaper: svc (pid ${server.svcPid}) ended before it had revoked its command's key.`,
  ];
  if (group !== null && jobAlive(group)) {
    signalJob(group, 'SIGKILL');
    lines.push(`It killed what was left of the command (process group ${group}).`);
  }
  if (key !== null) {
    try {
      await revokeEphemeralKey(await reaperClient(server, io, deps), key, unguarded, deps.sleep);
      lines.push(`It revoked the key made for the command, ${clip(key.id, 200)}.`);
    } catch (error) {
      lines.push(...(error instanceof CliError ? error.lines : [`The key made for the command, ${clip(key.id, 200)}, could not be revoked: ${clip((error as Error).message, 200)}.`]));
    }
  }
  // A create's key may land as late as a gateway lets its upstream work: the reaper looks as long as svc itself would have.
  if (key === null && creating !== null) lines.push(...(await revokeWhatItMade(creating, await reaperClient(server, io, deps, GATEWAY_MS + server.timeoutMs), deps)));
  (await createRenderer(io, { quiet: false })).warn(...lines);
}

/**
 * svc ended while its create was out: the key it made, if the create
 * landed, is found by the marks svc drew for it, as svc itself would look
 * (operations/look-for-orphans.ts), within the reaper's bound, and revoked.
 * A key of that name without the marks may be another job's: named only.
 */
async function revokeWhatItMade(wanted: Wanted, client: ApiClient, deps: Deps): Promise<string[]> {
  const lookup = await lookForOrphans(client, wanted, { now: deps.now, stop: new Promise(() => {}), once: false });
  const lines: string[] = [];
  for (const orphan of lookup.sighting?.orphans ?? []) {
    try {
      await client.revokeKey(orphan.id, { finish: true });
      lines.push(`It revoked the key svc's create made meanwhile, ${clip(orphan.id, 200)}, whose secret nobody saw.`);
    } catch (error) {
      lines.push(`svc's create made a key meanwhile, ${clip(orphan.id, 200)}, which it could not revoke (${clip((error as Error).message, 200)}): ${revokeCommand(orphan.id)}.`);
    }
  }
  if (lines.length > 0) return lines;
  const named = `'${clip(wanted.name, 200)}'`;
  const others = lookup.sighting?.candidates ?? [];
  return [
    `svc ended while its create of a key named ${named} was out, and no key it can tell for that create's was in the list within ${Math.round(lookup.windowMs / 1000)} s of svc's end${
      lookup.failure === null ? '' : ` (the last look: ${clip(lookup.failure, 200)})`
    }: check \`svc keys list --name ${shellWord(wanted.name)}\`.`,
    ...others.map((other) => `  ${clip(other.id, 200)}, of that name, may be another job's: svc revoked none.`),
  ];
}

/** svc's client as svc's session had it, within the reaper's bound: the proxies and CAs come with the environment svc passed on. */
async function reaperClient(server: ReaperServer, io: IO, deps: Deps, boundMs = REAP_BOUND_MS): Promise<ApiClient> {
  const [{ ApiClient }, { createUndiciTransport }] = await Promise.all([import('../../client/api.js'), import('../../client/transport.js')]);
  const until = deps.now() + boundMs;
  return new ApiClient({
    baseUrl: server.baseUrl,
    apiKey: server.apiKey,
    timeoutMs: Math.min(server.timeoutMs, REAP_BOUND_MS),
    deadlineMs: until,
    waitUntilMs: until,
    policy: { ...DEFAULT_POLICY, maxWaitSeconds: boundMs / 1000 },
    transport: deps.transport ?? createUndiciTransport({ proxy: proxySettings(io.env) }),
    userAgent: `svc/${SVC_VERSION} node/${process.versions.node}`,
    wait: (event) => deps.sleep(event.ms),
    now: deps.now,
    random: deps.random,
    origin: server.origin,
  });
}
