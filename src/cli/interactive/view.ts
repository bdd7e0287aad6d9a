import { keyHint } from '../../contract/key-format.js';
import type { PendingRotation } from '../config/store.js';
import { readKeyList, readWorkspace, type KeyView, type WorkspaceView } from '../../client/key-view.js';
import type { Context, Credentials } from '../context.js';
import { ExitCode, InterruptedError } from '../errors.js';
import { describeFailure } from '../report.js';

/** What the session shows above its menu. */
export interface View {
  credentials: Credentials | null;
  baseUrl: string;
  /** Null when logged out, or when the server has no GET /workspace. */
  workspace: WorkspaceView | null;
  /** Newest first. */
  keys: KeyView[];
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
 * Who the session is and its keys. Each read is tried once: a session that
 * cannot read them says why, with the address, and offers to try again,
 * instead of backing off through a row of retries.
 */
export async function loadView(ctx: Context): Promise<View> {
  const baseUrl = await ctx.baseUrl();
  const pending = (await ctx.config()).getProfile(ctx.profileName).pendingRotation;
  const empty = { baseUrl, workspace: null, keys: [], inUse: undefined, nowMs: ctx.deps.now(), pending, failure: null };
  let credentials: Credentials | null = null;
  try {
    credentials = await ctx.findCredentials();
    if (!credentials) return { ...empty, credentials };
    const client = await ctx.client(credentials);
    const [workspace, list] = await Promise.all([
      client.findWorkspace({ maxRetries: 0 }).then((res) => res && readWorkspace(res.body)),
      client.listKeys({ maxRetries: 0 }),
    ]);
    return {
      ...empty,
      credentials,
      workspace,
      keys: newestFirst(readKeyList(list.body)),
      inUse: keyHint(credentials.apiKey),
      nowMs: client.serverNow(),
    };
  } catch (error) {
    if (error instanceof InterruptedError) throw error;
    const { exitCode, lines } = describeFailure(error, { verbose: ctx.globals.verbose === true });
    return { ...empty, credentials, failure: { lines, unauthenticated: exitCode === ExitCode.unauthenticated } };
  }
}

/** Newest first (the service lists them so; another server may not), keys without a creation time last. */
function newestFirst(keys: KeyView[]): KeyView[] {
  return keys
    .map((key, index) => ({ key, index }))
    .sort((a, b) => (b.key.createdAt ?? -Infinity) - (a.key.createdAt ?? -Infinity) || a.index - b.index)
    .map(({ key }) => key);
}
