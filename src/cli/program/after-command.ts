import type { KeyList } from '../../client/api.js';
import { holdsKey } from '../config/file.js';
import { assessKeyHealth, warningDays } from '../operations/key-health.js';
import type { Credentials, ProfileSession } from '../session/session.js';
import { healthWarnings } from '../views/keys.js';
import { readEnv } from '../terminal/environment.js';
import { CliError } from '../errors/errors.js';
import type { Line } from '../text/text.js';

/** What a command hands back to the step that runs after it. */
export interface Outcome {
  /** The key list the command read, if it read one: what the key-health step learns the key's expiry from. */
  list?: KeyList;
  /** The key the command used, when it is not the session's (login's, or a rotation saved to the profile). */
  keyInUse?: Credentials;
}

/**
 * Key health (docs/contract.md §C8) after every command that used a key:
 * the expiry warning and the pending-rotation reminder, once each, never
 * with --quiet.
 */
export async function afterCommand(session: ProfileSession, credentials: Credentials | null, list: KeyList | undefined): Promise<void> {
  for (const line of await keyHealth(session, credentials, list)) session.render.warn(line);
}

/**
 * The key-health step: what afterCommand warns of, and the interactive
 * manager shows on every screen it draws; none with --quiet. The profile
 * remembers its key's expiry through the config writer, and only while it
 * still holds that key.
 */
export async function keyHealth(session: ProfileSession, credentials: Credentials | null, list: KeyList | undefined): Promise<Line[]> {
  if (!credentials) return [];
  const profile = session.config.getProfile(session.profileName);
  const health = assessKeyHealth({ credentials, profile, list, nowMs: session.deps.now() });
  const remember = health.remember;
  if (remember) {
    // A cache, written after the command did what it was asked: failing to write it is worth a warning, not a failed
    // command. A signal that stopped the write (its wait for another svc's lock) still ends svc.
    try {
      await session.config.update(session.profileName, (current) => (holdsKey(current, credentials.apiKey) ? { ...current, keyExpiry: remember } : { ...current }));
    } catch (error) {
      if (!(error instanceof CliError) || error.signal !== null) throw error;
      session.render.warn(`The key's expiry was not remembered in profile '${session.profileName}'. ${error.message}`);
    }
  }
  if (session.options.quiet) return [];
  // svc run --ephemeral's key ends with the job it was made for: rotating it would help nobody.
  const jobsOwn = health.expiry !== null && health.expiry.id === readEnv(session.io.env, 'SVC_EPHEMERAL_KEY_ID');
  return healthWarnings(jobsOwn ? { ...health, expiry: null } : health, warningDays(readEnv(session.io.env, 'SVC_EXPIRY_WARNING_DAYS')), session.profileName, session.profileSource === 'flag');
}
