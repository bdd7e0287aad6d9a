import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { printJson } from '../../output.js';
import type { App } from '../../program.js';
import { describeRateLimit, readRateLimit } from '../../rate-limit.js';

export function register(keys: Command, app: App): void {
  keys
    .command('ping')
    .description('check that the key in use works (exit 0), or say why not')
    .addHelpText('after', '\nExamples:\n  $ svc keys ping\n  $ SVC_API_KEY=$KEY svc keys ping --quiet && echo ok')
    .action(app.action(run));
}

/** The spec's smoke test: GET /user/api-keys answers 200 for a valid, enabled key under its ceiling. */
export async function run(ctx: Context): Promise<void> {
  const client = await ctx.client();
  const res = await client.listKeys();
  const rateLimit = readRateLimit(res);
  if (ctx.globals.json) {
    printJson(ctx.io, {
      ok: true,
      status: res.status,
      latencyMs: res.latencyMs,
      baseUrl: client.baseUrl,
      key: { hint: client.keyHint, source: client.origin.keySource },
      rateLimit,
    });
    return;
  }
  if (ctx.globals.quiet) return;
  ctx.io.stdout.write(
    `Key ${client.keyHint} works: ${res.status} from ${client.baseUrl} in ${res.latencyMs} ms; ${describeRateLimit(rateLimit)}.\n`,
  );
}
