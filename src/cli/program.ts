import { Command, InvalidArgumentError, Option } from 'commander';
import type { IO } from './io.js';
import { createContext, type Context, type GlobalOptions } from './context.js';
import type { Deps } from './deps.js';

/** What every command module's `register` receives. */
export interface App {
  io: IO;
  /** Wraps a command's run function into a commander action with a ready Context. */
  action<A extends unknown[]>(
    run: (ctx: Context, ...args: A) => Promise<void>,
  ): (...args: unknown[]) => Promise<void>;
}

/** A commander argument parser for whole numbers; rejects "10ms", "1e3", "-1". */
export function integerAtLeast(min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min) {
      throw new InvalidArgumentError(`expected a whole number of at least ${min}.`);
    }
    return n;
  };
}

export interface Program {
  program: Command;
  app: App;
}

export function createProgram(io: IO, deps: Deps): Program {
  const program = new Command('svc')
    .description("Manage API keys for the media-generation service, and run its reference server offline.")
    .addHelpText(
      'after',
      `
With no command on a terminal, svc opens an interactive key manager;
anywhere else it prints this help on stderr and exits 2.

Examples:
  $ svc serve --local
  $ svc login
  $ svc keys list
  $ KEY=$(svc keys create ci --expires-in 30d)
  $ svc`,
    )
    .version(SVC_VERSION, '-V, --version', 'print the version and exit')
    .helpOption('-h, --help', 'show help for a command')
    .addHelpCommand('help [command]', 'show help for a command')
    .showSuggestionAfterError(true)
    // Every subcommand's help lists the program's options it accepts too, as gh's INHERITED FLAGS do.
    .configureHelp({ showGlobalOptions: true })
    .option('--json', 'print exactly one JSON document on stdout (the API\'s own shape)')
    .option('-q, --quiet', 'print only the data, no messages')
    .option('--no-input', 'never prompt; a missing answer is a usage error')
    .option('--base-url <url>', 'service address (env SVC_BASE_URL)')
    .option('--profile <name>', 'config profile (env SVC_PROFILE)')
    .addOption(
      new Option('--timeout <ms>', 'per-request timeout in milliseconds (default 10000)').argParser(
        integerAtLeast(1),
      ),
    )
    .option('--no-wait', 'fail with exit 5 on a rate limit instead of waiting')
    .addOption(
      new Option('--max-wait <seconds>', 'longest total wait for rate limits')
        .default(300)
        .argParser(integerAtLeast(0)),
    )
    .option('-v, --verbose', 'log each request on stderr (key redacted)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    });

  const app: App = {
    io,
    action(run) {
      return async (...args: unknown[]) => {
        const command = args[args.length - 1] as Command;
        const ctx = createContext(io, command.optsWithGlobals() as GlobalOptions, deps);
        await run(ctx, ...(args.slice(0, -1) as never));
        await ctx.afterCommand();
      };
    },
  };
  return { program, app };
}
