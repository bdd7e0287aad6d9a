import { keyHint } from '../../contract/key-format.js';
import type { PendingRotation } from '../config/store.js';
import { readKeyList, readWorkspace, type KeyView, type WorkspaceView } from '../../client/key-view.js';
import type { Context, Credentials } from '../context.js';

/** What the session shows above its menu. */
export interface View {
  credentials: Credentials | null;
  baseUrl: string;
  /** Null when logged out, or when the server has no GET /workspace. */
  workspace: WorkspaceView | null;
  keys: KeyView[];
  /** The server's clock, for relative times. */
  nowMs: number;
  /** The profile's `keys rotate --overlap` not yet finished. */
  pending: PendingRotation | undefined;
  inUse: string | undefined;
}

/** Who the session is and what the server holds, read afresh before each menu. */
export async function loadView(ctx: Context): Promise<View> {
  const credentials = await ctx.findCredentials();
  const baseUrl = await ctx.baseUrl();
  const pending = (await ctx.config()).getProfile(ctx.profileName).pendingRotation;
  if (!credentials) return { credentials, baseUrl, workspace: null, keys: [], inUse: undefined, nowMs: ctx.deps.now(), pending };
  const client = await ctx.client(credentials);
  const [workspace, list] = await Promise.all([
    client.findWorkspace().then((res) => res && readWorkspace(res.body)),
    client.listKeys(),
  ]);
  return {
    credentials,
    baseUrl,
    workspace,
    keys: readKeyList(list.body),
    inUse: keyHint(credentials.apiKey),
    nowMs: client.serverNow(),
    pending,
  };
}
