/**
 * `svc run --ephemeral` (docs/contract.md §C10): a key made for one
 * command, expiring after a lifetime read on the server's clock, and its
 * revocation once the command is over. Every request goes through `guard`,
 * the caller's watch over the signals that come while it is out.
 */
import { basename } from 'node:path';
import type { ApiClient } from '../../client/api.js';
import { CliError, UsageError } from '../errors.js';
import { isNotFound, revokeCommand } from '../keys.js';
import { clip, shellWord } from '../render/text.js';
import type { Deps } from '../deps.js';
import { parseDuration } from '../duration.js';
import { createKey } from './create.js';

export const DEFAULT_LIFETIME = '1h';
/** The longest --ephemeral: a key for one command that outlives a working day is no longer one. */
export const MAX_LIFETIME = '24h';

export interface EphemeralKey {
  id: string;
  secret: string;
  name: string;
  expiresAt: string;
}

/** Which request a signal came during: nothing is made yet, a key may be, or one is being revoked. */
export type Step = { kind: 'clock' } | { kind: 'create'; name: string; expiresAt: string } | { kind: 'revoke'; key: EphemeralKey };

/** `work`, with the signals that come while it is out answered as the caller sees fit for `step`. */
export type Guard = <T>(step: Step, work: () => Promise<T>) => Promise<T>;

/** `--ephemeral [duration]`: its lifetime in milliseconds; a usage error past MAX_LIFETIME. */
export function ephemeralLifetime(given: string | true): number {
  if (given !== true && !/^\s*\d/.test(given)) {
    // `svc run --ephemeral deploy.sh`: the option's value is optional, so the command's name was taken for it.
    throw new UsageError(`--ephemeral takes '${clip(given, 200)}' for its duration: put -- before the command (svc run --ephemeral -- ${clip(given, 200)} …).`);
  }
  const lifetime = parseDuration(given === true ? DEFAULT_LIFETIME : given);
  if (lifetime > parseDuration(MAX_LIFETIME)) {
    throw new UsageError(`--ephemeral ${clip(String(given), 200)} is too long: a key made for one command lives at most ${MAX_LIFETIME}.`);
  }
  return lifetime;
}

export async function createEphemeralKey(
  client: ApiClient,
  request: { name: string | undefined; lifetimeMs: number; command: string },
  guard: Guard,
  now: Deps['now'],
): Promise<EphemeralKey> {
  const serverNow = await guard({ kind: 'clock' }, () => client.readServerClock());
  const expiresAt = client.marks.expiry(serverNow + request.lifetimeMs);
  const name = request.name ?? client.marks.name(`run ${clip(basename(request.command), 60)} ${new Date(serverNow).toISOString().replace(/\.\d+Z$/, 'Z')}`);
  // The run's own watch answers the signals (the guard): the create's must not answer them a second time.
  const watch = { now, onSignal: () => () => {}, interrupted: () => {} };
  const made = await guard({ kind: 'create', name, expiresAt }, () => createKey(client, { name, expiresAt }, watch));
  const { id } = made.view;
  if (made.secret === null || id === null) {
    const why = made.secret === null ? "svc could not find the new key's secret in the server's answer" : "the server's answer gives no id for the new key, so svc could not revoke it afterwards";
    if (id !== null) await revokeEphemeralKey(client, { id, secret: '', name, expiresAt }, guard);
    throw new CliError([
      `The command was not run: ${why}.`,
      id !== null ? `The key it made, ${clip(id, 200)}, is revoked.` : `The key named '${clip(name, 200)}' expires at ${expiresAt}; to revoke it before, ${revokeCommand(null)}.`,
    ]);
  }
  return { id, secret: made.secret, name, expiresAt };
}

/** A key already gone counts as revoked; a revoke that fails says which key still works, and until when. */
export async function revokeEphemeralKey(client: ApiClient, key: EphemeralKey, guard: Guard): Promise<void> {
  try {
    await guard({ kind: 'revoke', key }, () => client.revokeKey(key.id));
  } catch (error) {
    if (isNotFound(error)) return;
    if (error instanceof SignalStop) throw error;
    throw new CliError([
      `The key made for the command, ${clip(key.id, 200)}, could not be revoked: ${clip((error as Error).message, 200)}.`,
      `It works until ${key.expiresAt}: revoke it with \`svc keys revoke ${shellWord(key.id)}\`.`,
    ]);
  }
}

/** A second signal while a request was out: svc stops at once, saying what it leaves behind. */
export class SignalStop extends CliError {
  constructor(lines: readonly string[], exitCode: number) {
    super(lines, exitCode as CliError['exitCode']);
    this.name = 'SignalStop';
  }
}
