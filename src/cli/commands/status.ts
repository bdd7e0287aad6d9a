import type { Command } from 'commander';
import { PROBE, type ApiClient, type ApiResponse } from '../../client/api.js';
import { ApiError, NetworkError, RateLimitedError } from '../../client/errors.js';
import { readWorkspace } from '../../client/key-view.js';
import { keyHint } from '../../contract/key-format.js';
import type { BaseUrlSource, Context, KeySource } from '../context.js';
import { NotAuthenticatedError } from '../errors.js';
import { printJson, styleFor, visible } from '../output.js';
import type { App } from '../program.js';
import { describeRateLimit, readRateLimit } from '../rate-limit.js';
import { describeFailure } from '../report.js';

export function register(program: Command, app: App): void {
  program
    .command('status')
    .description('show the server, profile, key, workspace, plan and rate limit in use')
    .addHelpText(
      'after',
      '\nOne request, never retried or delayed: the block is printed whatever the state, with ✗ where something failed.\n' +
        'Exit 0 when the key works (rate limited included), 3 without a working key, 1 when the server cannot be reached.\n\n' +
        'Examples:\n  $ svc status\n  $ svc status --json | jq .workspace.plan',
    )
    .action(app.action(run));
}

const SOURCE_TEXT = {
  flag: 'from --base-url',
  env: 'from SVC_BASE_URL',
  profile: 'from the profile',
  default: 'default: the local reference server',
} as const;

/** The `--json` document: everything the text block says, null where it is not known. */
export interface StatusReport {
  profile: string;
  baseUrl: string | null;
  baseUrlSource: BaseUrlSource | null;
  /** Null when no key is configured; `valid` null when the server did not say. */
  key: { hint: string | null; source: KeySource; valid: boolean | null } | null;
  /** The server's document; null when it was not read or the server has no GET /workspace. */
  workspace: unknown;
  /** `limited`: the key has no requests left until the reset; `limit` null when the 429 did not say. */
  rateLimit: { limit: number | null; remaining: number; resetSeconds: number; limited: boolean } | null;
  latencyMs: number | null;
  /** What failed, as the error message on stderr says it; null when the key works. */
  error: { message: string; exitCode: number; status: number | null } | null;
}

/**
 * `svc status` prints what it knows in every state (docs/contract.md §C3): a
 * rejected key, a server that does not answer or a spent rate limit is a
 * line of the block, marked, not the end of it. One request, never retried
 * and never slept through: a status is asked for when something is wrong.
 */
export async function run(ctx: Context): Promise<void> {
  const base = await ctx.resolveBaseUrl();
  const report: StatusReport = {
    profile: ctx.profileName,
    baseUrl: base.url,
    baseUrlSource: base.source,
    key: null,
    workspace: null,
    rateLimit: null,
    latencyMs: null,
    error: null,
  };
  let failure: unknown;
  let workspaceOffered = true;
  try {
    const creds = await ctx.findCredentials();
    if (!creds) throw new NotAuthenticatedError(`Not logged in: no API key for profile '${ctx.profileName}'.`, ctx.profileName);
    report.key = { hint: keyHint(creds.apiKey), source: creds.source, valid: null };
    const client = await ctx.client(creds);
    try {
      const { res, workspace } = await readWorkspaceOrList(client);
      workspaceOffered = workspace !== null;
      report.key.valid = true;
      report.workspace = workspace;
      const rateLimit = readRateLimit(res);
      report.rateLimit = rateLimit && { ...rateLimit, limited: false };
      report.latencyMs = res.latencyMs;
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
    const { exitCode, lines } = describeFailure(error, { verbose: ctx.globals.verbose === true });
    report.error = { message: lines.join('\n'), exitCode, status: error instanceof ApiError ? error.status : null };
  }

  if (ctx.globals.json) printJson(ctx.io, report);
  else printBlock(ctx, report, failure, workspaceOffered);
  if (failure !== undefined) throw failure;
}

function printBlock(ctx: Context, report: StatusReport, failure: unknown, workspaceOffered: boolean): void {
  const style = styleFor(ctx.io.colorStdout);
  const bad = (text: string) => `${style.red('✗')} ${text}`;
  const line = (label: string, value: string) => ctx.io.stdout.write(`${`${label}:`.padEnd(12)}${value}\n`);
  const shown = (value: string | null) => (value === null ? '-' : visible(value));

  line('Profile', report.profile);
  const server = `${report.baseUrl} (${SOURCE_TEXT[report.baseUrlSource!]})`;
  if (failure instanceof NetworkError) line('Server', `${server}  ${bad(`no answer: ${failure.message}`)}`);
  else if (failure instanceof ApiError && failure.status !== 401) line('Server', `${server}  ${bad(`answered ${failure.status}`)}`);
  else line('Server', server);

  const key = report.key;
  if (key === null) {
    line('Key', bad(failure instanceof NotAuthenticatedError ? 'none: not logged in' : firstLine(report)));
    return;
  }
  const from = key.source === 'env' ? 'from SVC_API_KEY' : 'from the profile';
  const verdict =
    key.valid === true
      ? `${style.green('✓')} valid`
      : key.valid === false
        ? bad('rejected (401): unknown, disabled, expired or revoked')
        : failure instanceof NetworkError || failure instanceof ApiError
          ? style.dim('not checked')
          : bad(firstLine(report));
  line('Key', `${key.hint} (${from})  ${verdict}`);
  if (key.valid !== true) return;

  if (report.rateLimit?.limited) {
    line('Workspace', style.dim('not read: rate limited'));
  } else if (!workspaceOffered) {
    line('Workspace', 'not reported: this server has no GET /workspace');
  } else {
    const ws = readWorkspace(report.workspace);
    line('Workspace', ws.id === null ? shown(ws.name) : `${shown(ws.name)} (${visible(ws.id)})`);
    line('Plan', `${shown(ws.plan)}${ws.requestsPerMinute === null ? '' : `, ${ws.requestsPerMinute} requests/minute`}`);
  }
  const rateLimit = report.rateLimit;
  line('Rate limit', rateLimit?.limited ? bad(describeRateLimit(rateLimit)) : describeRateLimit(rateLimit));
  if (report.latencyMs !== null) line('Latency', `${report.latencyMs} ms`);
}

function firstLine(report: StatusReport): string {
  return report.error?.message.split('\n')[0] ?? '';
}

/**
 * The workspace of the key, or, where the server has no such endpoint (the
 * spec does not promise one), the key list: the spec's own smoke test
 * still says whether the key works (docs/contract.md §C6).
 */
async function readWorkspaceOrList(client: ApiClient): Promise<{ res: ApiResponse<unknown>; workspace: unknown }> {
  const res = await client.findWorkspace(PROBE);
  return res ? { res, workspace: res.body } : { res: await client.listKeys(PROBE), workspace: null };
}
