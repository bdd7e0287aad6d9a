import type { KeyList } from '../../client/api.js';
import { IncompleteListError } from '../../client/errors.js';
import { isWellFormedKey } from '../../contract/key-format.js';
import { UsageError } from '../errors/errors.js';
import { describeFailure } from '../views/failure.js';
import { profileContext } from '../operations/context.js';
import { logIn, loginReplaces, type Replaced } from '../operations/profile.js';
import { confirmChange } from './confirm.js';
import { clip } from '../text/text.js';
import type { ProfileSession } from '../session/session.js';
import type { KeyStore } from '../secret-store/saved-key.js';
import { readEnv } from '../terminal/environment.js';
import { resolveEndpoint, sameServer } from '../session/endpoint.js';

const FORMAT_HINT = 'API keys are sk_ followed by 64 letters and digits.';

/** `svc login` and the manager's Log in: checks the key, saves it, says where. */
export async function logInWith(session: ProfileSession, apiKey: string, to?: KeyStore): Promise<KeyList | undefined> {
  if (!isWellFormedKey(apiKey)) throw new UsageError(`That is not an API key. ${FORMAT_HINT}`);
  const { list, listFailure, url, hint, configPath, store, leftover, replaced } = await logIn(profileContext(session), apiKey, to);
  const { render, profileName } = session;
  const where = store === 'keyring' ? `its key in the OS keyring, the profile in ${configPath}` : configPath;
  // Said whether or not it was asked: a script's log is where a replaced key is looked for later.
  if (replaced) render.warn(`Profile '${clip(profileName, 200)}' ${replacedText(replaced)}; it now holds ${hint} for ${url}.`);
  render.success(`Logged in to ${url} with ${hint}; saved to profile '${profileName}' (${where}).`);
  if (session.options.json) render.json({ profile: profileName, baseUrl: url, key: { hint, store }, config: configPath, replaced: replaced && { hint: replaced.hint, baseUrl: replaced.baseUrl } });
  if (listFailure !== null) {
    // The first page proved the key: what stopped the rest is said, and costs only what the list would have told.
    const why = describeFailure(listFailure, { verbose: session.options.verbose === true }).lines[0]!;
    render.info(listFailure instanceof IncompleteListError ? why : `Could not read the whole key list: ${why}`, 'The key works and is saved; svc learns its expiry once a command reads the whole list.');
  }
  if (leftover) render.warn(...leftover.lines);
  if (readEnv(session.io.env, 'SVC_API_KEY')) render.warn('SVC_API_KEY is set in this environment and takes precedence over the saved key.');
  return list;
}

/** "held key sk_ab…wxyz for http://…", "pointed at http://…": what a login replaced, after the profile's name. */
function replacedText({ hint, baseUrl }: Replaced): string {
  return hint === null ? `pointed at ${baseUrl}` : `held key ${hint} for ${baseUrl}`;
}

/**
 * `svc login` never replaces a profile's key or server unasked
 * (docs/contract.md §C2), as `gh auth login` asks before it re-authenticates:
 * on a terminal, before the key is typed, the profile's key and server are
 * named and the person says whether to replace them; No, Esc or Ctrl-C
 * leave the profile as it was (exit 130). --yes, like every --yes of svc, is
 * the answer given beforehand. Where nobody can be asked the login goes on
 * (scripts rely on it) and says afterwards what it replaced (logInWith).
 */
export async function confirmReplacing(session: ProfileSession, yes: boolean): Promise<void> {
  const replacing = loginReplaces(session.profile, session.endpoint);
  if (replacing === null || yes || !session.canPrompt) return;
  const { hint, baseUrl, newBaseUrl } = replacing;
  const profile = `Profile '${clip(session.profileName, 200)}'`;
  const moves = !sameServer(baseUrl, newBaseUrl);
  const question =
    hint === null
      ? `${profile} points at ${baseUrl}; point it at ${newBaseUrl} instead?`
      : `${profile} already holds key ${hint} for ${baseUrl}; replace it${moves ? ` with a key for ${newBaseUrl}` : ''}?`;
  await confirmChange(session, question, 'the profile was not changed');
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
