import { PROBE, type ApiClient, type ApiResponse, type KeyList } from '../../client/api.js';
import { ApiError, NetworkError, RateLimitedError } from '../../client/errors.js';
import { keyHint } from '../../contract/key-format.js';
import { readRateLimit } from '../../client/rate-limit.js';
import type { KeyStore } from '../secret-store/saved-key.js';
import type { BaseUrlSource, Credentials, KeySource, ProfileSource } from '../session/session.js';
import type { AllProfilesContext, StatusContext } from './context.js';

/** The `--json` document: everything the text block says, null where it is not known. */
export interface StatusReport {
  profile: string;
  /** Why that profile: --profile, SVC_PROFILE, a project's `.svc-profile` (`profileFile`), the default. */
  profileSource: ProfileSource;
  profileFile: string | null;
  baseUrl: string | null;
  baseUrlSource: BaseUrlSource | null;
  /**
   * Null when no key is configured; `store` says where it came from (env,
   * the config file or the OS keyring); `valid` null when the server did not
   * say, or the keyring did not give the key.
   */
  key: { hint: string | null; source: KeySource; store: 'env' | KeyStore; valid: boolean | null } | null;
  /** The server's document; null when it was not read or the server has no GET /workspace. */
  workspace: unknown;
  /** `limited`: the key has no requests left until the reset; `limit` null when the 429 did not say. */
  rateLimit: { limit: number | null; remaining: number; resetSeconds: number; limited: boolean } | null;
  latencyMs: number | null;
}

export interface Status {
  report: StatusReport;
  /** What failed, to end the command with; undefined when the key works. */
  failure: unknown;
  workspaceOffered: boolean;
  credentials: Credentials | null;
  /** The key list, when it was read: the key-health step learns the key's expiry from it. */
  list: KeyList | undefined;
}

/**
 * `svc status` (docs/contract.md §C3): what is known in every state. A
 * rejected key, a server that does not answer or a spent rate limit is a
 * line of the report, not the end of it. Each request once, never retried
 * and never slept through: a status is asked for when something is wrong.
 */
export async function readStatus(ctx: StatusContext): Promise<Status> {
  const { endpoint, profileName, credentials } = ctx;
  const report: StatusReport = {
    profile: profileName,
    profileSource: ctx.profileSource,
    profileFile: ctx.profileFile,
    baseUrl: endpoint.url,
    baseUrlSource: endpoint.source,
    key: null,
    workspace: null,
    rateLimit: null,
    latencyMs: null,
  };
  let failure: unknown;
  let workspaceOffered = true;
  let list: KeyList | undefined;
  try {
    // The keyring did not give the profile's key: where it is kept is still known, and said.
    const kept = ctx.profile.keyring;
    if (!credentials && ctx.keyFailure && kept) report.key = { hint: kept.hint, source: 'profile', store: 'keyring', valid: null };
    if (!credentials) throw ctx.noKey();
    const store = credentials.source === 'env' ? 'env' : (credentials.store ?? 'file');
    report.key = { hint: keyHint(credentials.apiKey), source: credentials.source, store, valid: null };
    const client = await ctx.connect(credentials);
    try {
      const read = await readWorkspaceOrList(client);
      list = read.list;
      workspaceOffered = read.workspace !== null;
      report.key.valid = true;
      report.workspace = read.workspace;
      const rateLimit = readRateLimit(read.res);
      report.rateLimit = rateLimit && { ...rateLimit, limited: false };
      report.latencyMs = read.res.latencyMs;
    } catch (error) {
      // The limiter answers only a key it has accepted.
      if (!(error instanceof RateLimitedError)) throw error;
      report.key.valid = true;
      const rateLimit = readRateLimit(error);
      report.rateLimit = {
        limit: rateLimit?.limit ?? null,
        remaining: rateLimit?.remaining ?? 0,
        resetSeconds: rateLimit?.resetSeconds ?? error.retryAfterSeconds,
        limited: true,
      };
    }
  } catch (error) {
    if (error instanceof ApiError && error.status === 401 && report.key) report.key.valid = false;
    failure = error;
  }
  return { report, failure, workspaceOffered, credentials, list };
}

/**
 * The workspace of the key and, beside it, the key list for the key's
 * health; where the server has no GET /workspace (the spec does not
 * promise one), the list alone still says whether the key works
 * (docs/contract.md §C6). A list that fails after the workspace answered
 * is no failure of the status.
 */
async function readWorkspaceOrList(client: ApiClient): Promise<{ res: ApiResponse<unknown>; workspace: unknown; list: KeyList | undefined }> {
  const listing = client.listAllKeys(PROBE);
  listing.catch(() => {});
  const res = await client.findWorkspace(PROBE);
  if (res) return { res, workspace: res.body, list: await listing.catch(() => undefined) };
  const first = await client.probeKeyList(PROBE);
  return { res: first, workspace: null, list: await listing.catch(() => undefined) };
}

/**
 * Whether a profile's key works, in a word (`svc status --all`): `live`
 * (rate limited included: the limiter answers only a key it accepted),
 * `rejected` (401), `unreachable` (no answer), `failed` (any other answer or
 * refusal), `unreadable` (the keyring did not give it), `none` (no key).
 */
export type KeyState = 'live' | 'rejected' | 'unreachable' | 'failed' | 'unreadable' | 'none';

export interface ProfileStatus extends Status {
  state: KeyState;
  isActive: boolean;
  isDefault: boolean;
}

/**
 * `svc status --all`, as `gh auth status` checks every account: each
 * profile's own key against its own server, all at once, each as
 * `svc status --profile NAME` would read it.
 */
export async function readAllStatuses(ctx: AllProfilesContext): Promise<ProfileStatus[]> {
  return Promise.all(
    ctx.profiles.map(async (name) => {
      const profile = await ctx.statusOf(name);
      const status = await readStatus(profile);
      return { ...status, state: keyState(status, profile), isActive: name === ctx.active, isDefault: name === ctx.defaultName };
    }),
  );
}

function keyState({ report, failure }: Status, { credentials, keyFailure }: StatusContext): KeyState {
  if (report.key?.valid === true) return 'live';
  if (report.key?.valid === false) return 'rejected';
  if (!credentials) return keyFailure ? 'unreadable' : 'none';
  return failure instanceof NetworkError ? 'unreachable' : 'failed';
}
