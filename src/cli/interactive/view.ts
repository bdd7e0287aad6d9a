import type { KeyList } from '../../client/api.js';
import { readWorkspace, type KeyView, type WorkspaceView } from '../../client/key-view.js';
import { keyHint } from '../../contract/key-format.js';
import type { PendingRotation } from '../config/store.js';
import { ExitCode, InterruptedError } from '../errors/errors.js';
import { describeFailure } from '../views/failure.js';
import { withKey, type Credentials, type ProfileSession } from '../session/session.js';

/** What the manager shows above its menu. */
export interface View {
  credentials: Credentials | null;
  baseUrl: string;
  /** Null when logged out, or when the server has no GET /workspace. */
  workspace: WorkspaceView | null;
  /** Newest first. */
  keys: KeyView[];
  /** The list as read, for the key-health step. */
  list: KeyList | undefined;
  /** The server's clock, for relative times. */
  nowMs: number;
  /** The profile's `keys rotate --overlap` not yet finished. */
  pending: PendingRotation | undefined;
  inUse: string | undefined;
  /**
   * Why the keys could not be read (a rejected key, no answer): shown in
   * place of the table, with the menu offering what can mend it.
   */
  failure: { lines: string[]; unauthenticated: boolean } | null;
}

/**
 * Who the session is and its keys. Each read is tried once: a manager that
 * cannot read them says why, with the address, and offers to try again,
 * instead of backing off through a row of retries.
 */
export async function loadView(session: ProfileSession): Promise<View> {
  const { credentials } = session;
  const empty: View = {
    credentials,
    baseUrl: session.endpoint.url,
    workspace: null,
    keys: [],
    list: undefined,
    inUse: undefined,
    nowMs: session.deps.now(),
    pending: session.profile.pendingRotation,
    failure: null,
  };
  try {
    // A key the keyring would not give is shown as the failure it is, not as "not logged in".
    if (!credentials) {
      if (session.keyFailure) throw session.keyFailure;
      return empty;
    }
    const { client } = await withKey(session, credentials);
    const [workspace, list] = await Promise.all([
      client.findWorkspace({ maxRetries: 0 }).then((res) => res && readWorkspace(res.body)),
      client.listAllKeys({ maxRetries: 0 }),
    ]);
    return { ...empty, workspace, keys: newestFirst(list.keys), list, inUse: keyHint(credentials.apiKey), nowMs: list.nowMs };
  } catch (error) {
    if (error instanceof InterruptedError) throw error;
    const { exitCode, lines } = describeFailure(error, { verbose: session.options.verbose === true });
    return { ...empty, failure: { lines, unauthenticated: exitCode === ExitCode.unauthenticated } };
  }
}

/** Newest first (the service lists them so; another server may not), keys without a creation time last. */
function newestFirst(keys: KeyView[]): KeyView[] {
  return keys
    .map((key, index) => ({ key, index }))
    .sort((a, b) => (b.key.createdAt ?? -Infinity) - (a.key.createdAt ?? -Infinity) || a.index - b.index)
    .map(({ key }) => key);
}
