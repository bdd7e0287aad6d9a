import type { KeyList } from '../../client/api.js';
import { IncompleteListError } from '../../client/errors.js';
import { isWellFormedKey } from '../../contract/key-format.js';
import { UsageError } from '../errors/errors.js';
import { describeFailure } from '../views/failure.js';
import { profileContext } from '../operations/context.js';
import { logIn } from '../operations/profile.js';
import type { ProfileSession } from '../session/session.js';
import type { KeyStore } from '../secret-store/saved-key.js';
import { readEnv } from '../terminal/environment.js';
import { resolveEndpoint } from '../session/endpoint.js';

const FORMAT_HINT = 'API keys are sk_ followed by 64 letters and digits.';

/** `svc login` and the manager's Log in: checks the key, saves it, says where. */
export async function logInWith(session: ProfileSession, apiKey: string, to?: KeyStore): Promise<KeyList | undefined> {
  if (!isWellFormedKey(apiKey)) throw new UsageError(`That is not an API key. ${FORMAT_HINT}`);
  const { list, listFailure, url, hint, configPath, store, leftover } = await logIn(profileContext(session), apiKey, to);
  const { render, profileName } = session;
  const where = store === 'keyring' ? `its key in the OS keyring, the profile in ${configPath}` : configPath;
  render.success(`Logged in to ${url} with ${hint}; saved to profile '${profileName}' (${where}).`);
  if (session.options.json) render.json({ profile: profileName, baseUrl: url, key: { hint, store }, config: configPath });
  if (listFailure !== null) {
    // The first page proved the key: what stopped the rest is said, and costs only what the list would have told.
    const why = describeFailure(listFailure, { verbose: session.options.verbose === true }).lines[0]!;
    render.info(listFailure instanceof IncompleteListError ? why : `Could not read the whole key list: ${why}`, 'The key works and is saved; svc learns its expiry once a command reads the whole list.');
  }
  if (leftover) render.warn(...leftover.lines);
  if (readEnv(session.io.env, 'SVC_API_KEY')) render.warn('SVC_API_KEY is set in this environment and takes precedence over the saved key.');
  return list;
}

/**
 * The manager's Log in to a profile that has no server yet, with none given
 * by --base-url or SVC_BASE_URL: the address is asked for, Enter keeping
 * the default, and saved with the key (as `svc login --base-url` does).
 * The session comes back unchanged when there is nothing to ask.
 */
export async function askServer(session: ProfileSession): Promise<ProfileSession> {
  if (session.endpoint.source !== 'default' || !session.canPrompt) return session;
  const check = (answer: string) => {
    if (answer.trim() === '') return true;
    try {
      resolveEndpoint({ flag: answer.trim() });
      return true;
    } catch (error) {
      return error instanceof UsageError ? error.lines.join(' ') : 'Give the whole address, e.g. https://api.example.com.';
    }
  };
  const answer = (await (await session.prompts()).text(`Server address (Enter for ${session.endpoint.url}):`, check)).trim();
  if (answer === '') return session;
  const endpoint = resolveEndpoint({ flag: answer });
  if (endpoint.notice) session.render.warn(endpoint.notice);
  return Object.freeze({ ...session, endpoint });
}

/** The key from a masked prompt; without a person to ask, a usage error saying how to give it. */
export async function askKey(session: ProfileSession): Promise<string> {
  if (!session.canPrompt) {
    throw new UsageError('No key given: pipe it in with `svc login --with-key`, or run `svc login` on a terminal.');
  }
  const prompts = await session.prompts();
  return (await prompts.secret('API key:', (v) => (isWellFormedKey(v.trim()) ? true : FORMAT_HINT))).trim();
}
