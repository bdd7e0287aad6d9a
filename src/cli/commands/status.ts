import type { Command } from 'commander';
import type { ApiClient, ApiResponse } from '../../client/api.js';
import { readWorkspace } from '../../client/key-view.js';
import { keyHint } from '../../contract/key-format.js';
import type { Context } from '../context.js';
import { NotAuthenticatedError } from '../errors.js';
import { printJson, styleFor, visible } from '../output.js';
import type { App } from '../program.js';
import { describeRateLimit, readRateLimit } from '../rate-limit.js';

export function register(program: Command, app: App): void {
  program
    .command('status')
    .description('show the server, profile, key, workspace, plan and rate limit in use')
    .addHelpText('after', '\nExamples:\n  $ svc status\n  $ svc status --json | jq .workspace.plan')
    .action(app.action(run));
}

const SOURCE_TEXT = {
  flag: 'from --base-url',
  env: 'from SVC_BASE_URL',
  profile: 'from the profile',
  default: 'default: the local reference server',
} as const;

export async function run(ctx: Context): Promise<void> {
  const base = await ctx.resolveBaseUrl();
  const creds = await ctx.findCredentials();
  const line = (label: string, value: string) => ctx.io.stdout.write(`${`${label}:`.padEnd(12)}${value}\n`);

  if (!creds) {
    if (ctx.globals.json) printJson(ctx.io, { profile: ctx.profileName, baseUrl: base.url, key: null });
    else {
      line('Profile', ctx.profileName);
      line('Server', `${base.url} (${SOURCE_TEXT[base.source]})`);
      line('Key', 'none');
    }
    throw new NotAuthenticatedError(`Not logged in: no API key for profile '${ctx.profileName}'.`, ctx.profileName);
  }

  const client = await ctx.client(creds);
  const { res, workspace } = await readWorkspaceOrList(client);
  const rateLimit = readRateLimit(res);
  const key = { hint: keyHint(creds.apiKey), source: creds.source };
  if (ctx.globals.json) {
    printJson(ctx.io, { profile: ctx.profileName, baseUrl: base.url, key, workspace, rateLimit, latencyMs: res.latencyMs });
    return;
  }
  const style = styleFor(ctx.io.colorStdout);
  const ws = readWorkspace(workspace);
  const shown = (value: string | null) => (value === null ? '-' : visible(value));
  line('Profile', ctx.profileName);
  line('Server', `${base.url} (${SOURCE_TEXT[base.source]})`);
  line('Key', `${key.hint} (${creds.source === 'env' ? 'from SVC_API_KEY' : 'from the profile'}) ${style.green('valid')}`);
  if (workspace === null) {
    line('Workspace', 'not reported: this server has no GET /workspace');
  } else {
    line('Workspace', ws.id === null ? shown(ws.name) : `${shown(ws.name)} (${visible(ws.id)})`);
    line('Plan', `${shown(ws.plan)}${ws.requestsPerMinute === null ? '' : `, ${ws.requestsPerMinute} requests/minute`}`);
  }
  line('Rate limit', describeRateLimit(rateLimit));
  line('Latency', `${res.latencyMs} ms`);
}

/**
 * The workspace of the key, or, where the server has no such endpoint (the
 * spec does not promise one), the key list: the spec's own smoke test
 * still says whether the key works (docs/contract.md §C6).
 */
async function readWorkspaceOrList(client: ApiClient): Promise<{ res: ApiResponse<unknown>; workspace: unknown }> {
  const res = await client.findWorkspace();
  return res ? { res, workspace: res.body } : { res: await client.listKeys(), workspace: null };
}
