import { InvalidArgumentError, Option, type Command } from 'commander';
import { isLoopbackHost } from '../../client/loopback.js';
import { DEFAULT_BASE_URL } from '../../contract/paths.js';
import { PLANS, REQUESTS_PER_MINUTE, type Plan } from '../../contract/plans.js';
import type { LocalServerReady } from '../../contract/types.js';
import type { Context } from '../context.js';
import { CliError, UsageError } from '../errors.js';
import type { App } from '../program.js';
import { integerAtLeast } from '../program.js';

interface ServeOptions {
  local?: boolean;
  host: string;
  port: number;
  plan: Plan;
  data?: string;
  adminToken?: string;
}

export function register(program: Command, app: App): void {
  program
    .command('serve')
    .description('run the embedded reference server (offline; state in memory unless --data)')
    .option('--local', 'run the embedded reference server (required: the only kind there is)')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .addOption(new Option('--port <port>', 'port to listen on; 0 picks a free one').default(8787).argParser(parsePort))
    .addOption(new Option('--plan <plan>', 'plan of the first workspace (ignored with existing --data)').choices(PLANS).default('free'))
    .option('--data <file>', 'keep state in this file (key hashes only, never a plaintext key)')
    .option('--admin-token <token>', 'bearer token of the /_local admin area (env SVC_LOCAL_ADMIN_TOKEN; random otherwise)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ svc serve --local\n  $ svc serve --local --port 0 --json\n  $ svc serve --local --data ./svc-state.json --plan pro',
    )
    .action(app.action(run));
}

function parsePort(value: string): number {
  const port = integerAtLeast(0)(value);
  if (port > 65_535) throw new InvalidArgumentError('expected a port number from 0 to 65535.');
  return port;
}

/** An admin token travels as a bearer credential, so it must be one visible-ASCII word. */
const ADMIN_TOKEN = /^[\x21-\x7e]+$/;

export async function run(ctx: Context, options: ServeOptions): Promise<void> {
  if (!options.local) {
    throw new UsageError('svc serve needs --local: only the embedded reference server is supported (svc serve --local).');
  }
  const adminToken = options.adminToken ?? (ctx.io.env.SVC_LOCAL_ADMIN_TOKEN || undefined);
  if (adminToken !== undefined && !ADMIN_TOKEN.test(adminToken)) {
    throw new UsageError('--admin-token (or SVC_LOCAL_ADMIN_TOKEN) must be printable ASCII without spaces.');
  }

  // Loaded only here, so the server never weighs on the start-up of other commands.
  const { startServer, ServerStartError } = await import('../../server/listen.js');
  let server;
  try {
    server = await startServer({
      host: options.host,
      port: options.port,
      plan: options.plan,
      dataFile: options.data,
      adminToken,
      logError: (error) => ctx.io.stderr.write(`svc serve: unexpected error: ${error instanceof Error ? error.stack : String(error)}\n`),
      logWarning: (message) => ctx.io.stderr.write(`svc serve: ${message}\n`),
    });
  } catch (error) {
    if (error instanceof ServerStartError) throw new CliError(`svc serve: ${error.message}`);
    throw error;
  }

  if (!isLoopbackHost(options.host)) {
    ctx.msg.warn(
      `Listening on ${options.host}: this server has no TLS and is reachable from the network. Use --host 127.0.0.1 unless you mean it.`,
    );
  }
  // Listen for the stop signal before anyone is told the server is ready: a SIGTERM sent on reading the
  // ready line could otherwise land before the handler, killing the process (and leaving its lock behind).
  const stopSignal = untilStopSignal();
  if (ctx.globals.json) ctx.io.stdout.write(`${JSON.stringify(server.ready)}\n`);
  else printBanner(ctx, server.ready, options);

  const signal = await stopSignal;
  ctx.msg.info(`${signal}: finishing in-flight requests${options.data ? ' and saving state' : ''}…`);
  // A failed last save is reported as a warning by the server itself: everything acknowledged is on disk.
  await server.close();
  ctx.msg.info('Server stopped.');
}

/**
 * Resolves on the first SIGINT or SIGTERM. `once` handlers: a second Ctrl-C
 * during shutdown finds only bin/svc.js's own handler, which exits at once.
 */
function untilStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve(signal);
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  });
}

function printBanner(ctx: Context, ready: LocalServerReady, options: ServeOptions): void {
  const { style } = ctx.msg;
  const out = (line = '') => ctx.io.stderr.write(`${line}\n`);
  const row = (label: string, value: string) => out(`  ${label.padEnd(10)} ${value}`);

  out(`${style.green('●')} svc reference server listening on ${style.bold(ready.url)}`);
  row('plan', `${ready.plan} (${REQUESTS_PER_MINUTE[ready.plan]} requests per minute per workspace)`);
  row('state', options.data ? `${options.data} (key hashes only)` : 'in memory, gone when the server stops (--data <file> keeps it)');
  if (ready.apiKey) row('API key', `${style.bold(ready.apiKey)}  (shown only now)`);
  else row('API key', `not shown: ${options.data} keeps only key hashes; use a key you saved earlier`);
  row('admin', `${ready.adminToken}  (Bearer token for ${ready.url}/_local/)`);
  if (ctx.globals.quiet) return;

  out();
  out('Next, in another terminal:');
  if (ready.url !== DEFAULT_BASE_URL) out(`  export SVC_BASE_URL=${ready.url}`);
  if (ready.apiKey) out(`  export SVC_API_KEY=${ready.apiKey}`);
  out('  svc status');
  out('  svc keys list');
  out('  svc keys create my-first-key');
  out();
  out(style.dim('Ctrl-C stops the server.'));
}
