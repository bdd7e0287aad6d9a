import { Command, InvalidArgumentError, Option } from 'commander';
import { afterCommand, type Outcome } from './after-command.js';
import type { Deps } from '../terminal/deps.js';
import type { IO } from '../terminal/io.js';
import type { MaybeCreatedError } from '../operations/maybe-created.js';
import { optionFromElsewhere, unknownCommand } from '../domain/suggest.js';
import { resolveSession, type GlobalOptions, type KeySession, type Needs, type Session, type SessionFor } from '../session/session.js';

/** What every command module's `register` receives. */
export interface App {
  io: IO;
  /**
   * Wraps a command's run function into a commander action: the session is
   * resolved once for what the command needs, the command runs, then the
   * key-health step, for every command alike.
   */
  action<N extends Needs, A extends unknown[]>(
    needs: N,
    run: (session: SessionFor<N>, ...args: A) => Promise<Outcome | void>,
  ): (...args: unknown[]) => Promise<void>;
  /** The program-wide options as given, for a command that resolves its own sessions (the interactive manager). */
  options(command: Command): GlobalOptions;
  deps: Deps;
}

/**
 * Runs `step`; a create whose outcome is unknown is settled on the way out,
 * whichever command or action made it: on a terminal the person may revoke
 * the keys it made, whose secrets nobody saw.
 */
export async function settled<T>(session: Session, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    // By name: the create operation's module stays unloaded for commands that create nothing.
    if ((error as Error | undefined)?.name !== 'MaybeCreatedError' || !('client' in session)) throw error;
    const { settleOrphans } = await import('../dialogs/orphans.js');
    throw await settleOrphans(session as KeySession, error as MaybeCreatedError);
  }
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

/**
 * Lines longer than `width` broken between words, so that the terminal
 * does not break them inside one: the help's own prose, each paragraph of
 * which is one line in the source, fitted here to whatever width the help
 * is laid out for (commander wraps the option and command descriptions
 * itself). A broken line goes on under its own indent. An example (`  $
 * svc …`) stays whole: broken, it would paste as two commands, where the
 * terminal's own wrapping copies as one line. A word longer than the
 * width stays whole.
 */
export function wrapLines(text: string, width: number): string {
  const length = (t: string) => [...t].length;
  return text
    .split('\n')
    .map((line) => {
      if (length(line) <= width || /^ *\$ /.test(line)) return line;
      const lead = /^ */.exec(line)![0];
      const indent = lead;
      const out: string[] = [];
      let current = lead;
      // Each word with the spaces before it, so that spacing inside a line is kept.
      for (const [, space, word] of line.slice(lead.length).matchAll(/( *)(\S+)/g)) {
        if (current.trim() !== '' && length(current) + space!.length + length(word!) > width) {
          out.push(current);
          current = indent + word;
        } else {
          current += space! + word;
        }
      }
      out.push(current);
      return out.join('\n');
    })
    .join('\n');
}

/** A path as one shell word: left bare when it holds only characters no shell treats specially. */
function shellWord(path: string): string {
  return /^[\w./+@:,-]+$/.test(path) ? path : `'${path.replaceAll("'", "'\\''")}'`;
}

/**
 * Every command of svc: an unknown word or option is answered as
 * domain/suggest.ts answers it, with the words other CLIs use
 * (`--token`, `profile delete`) as well as commander's near spellings.
 * Commander calls these two for every command it parses, and makes each
 * subcommand with createCommand.
 */
class SvcCommand extends Command {
  override createCommand(name?: string): Command {
    return new SvcCommand(name);
  }

  unknownOption(flag: string): void {
    // A word that names no subcommand comes before an option it does not know (`svc keys delete ID --yes`): the word is the mistake.
    const [word] = this.args;
    if (this.commands.length > 0 && word !== undefined && !word.startsWith('-')) unknownCommand(this, this.args);
    // Only the name: `--token=sk_…` would print the key back.
    const name = flag.split('=')[0]!;
    const meant = name.startsWith('--') ? optionFromElsewhere(this, name) : null;
    if (meant === null) {
      (Command.prototype as unknown as { unknownOption(flag: string): void }).unknownOption.call(this, name);
      return;
    }
    this.error(`error: unknown option '${name}'\n${meant}`, { code: 'commander.unknownOption' });
  }

  unknownCommand(): void {
    unknownCommand(this, this.args);
  }
}

export interface Program {
  program: Command;
  app: App;
}

export function createProgram(io: IO, deps: Deps): Program {
  const program = new SvcCommand('svc')
    .description("Manage API keys for the media-generation service, and run its reference server offline.")
    .addHelpText(
      'after',
      `
With no command on a terminal, svc opens an interactive key manager; anywhere else it prints this help on stderr and exits 2.

Examples:
  $ svc serve --local
  $ svc login
  $ svc keys list
  $ KEY=$(svc keys create ci --expires-in 30d)
  $ svc

svc help environment lists the environment variables svc reads.`,
    )
    // Where the manual is, for a svc that man does not know of (npx): named always, since asking man costs a process.
    // The command on a line of its own, as an example, so that no width breaks the path; quoted when a shell would split it.
    .addHelpText('after', () => (io.manPage ? `The manual: man svc, or where man finds none (npx):\n  $ man ${shellWord(io.manPage)}` : ''))
    .version(SVC_VERSION, '-V, --version', 'print the version and exit')
    .helpOption('-h, --help', 'show help for a command')
    .addHelpCommand('help [command...]', 'show help for a command: svc help keys list')
    .showSuggestionAfterError(true)
    // Every subcommand's help lists the program's options it accepts too, as gh's INHERITED FLAGS do.
    // Descriptions wrap between words in however narrow a column is left beside the option names.
    .configureHelp({ showGlobalOptions: true, minWidthToWrap: 16 })
    .option('--json', 'print exactly one JSON document on stdout (the API\'s own shape)')
    .addOption(
      new Option('--query <expression>', "with --json (which it implies): print what a JMESPath expression picks of the document, a string as raw text: --query 'keys[].id'").implies({
        json: true,
      }),
    )
    .option('-q, --quiet', 'print only the data, no messages')
    .option('--no-input', 'never prompt; a missing answer is a usage error')
    .option('--base-url <url>', 'service address (env SVC_BASE_URL)')
    .option('--profile <name>', 'config profile (env SVC_PROFILE)')
    .addOption(
      // Not commander's .default(): `svc api` tells "not given" from 10000, for its longer default on generation paths.
      new Option('--timeout <ms>', 'per-request timeout in milliseconds (default: 10000; 60000 for `svc api` beyond key management)').argParser(
        integerAtLeast(1),
      ),
    )
    .option('--no-wait', 'fail with exit 5 on a rate limit instead of waiting')
    .addOption(
      new Option('--max-wait <seconds>', 'longest a command waits, for rate limits and retries alike, counted on the clock')
        .default(300)
        .argParser(integerAtLeast(0)),
    )
    .option('-v, --verbose', 'log each request on stderr (key redacted)')
    .exitOverride()
    .configureOutput({
      // Help is laid out for the terminal's width; piped, for 80 columns.
      writeOut: (s) => io.stdout.write(wrapLines(s, io.stdoutIsTTY ? io.columns : 80)),
      writeErr: (s) => io.stderr.write(wrapLines(s, io.stderrIsTTY ? io.columns : 80)),
      // commander's own errors (a bad option value) as svc's are: fitted to a terminal, one line each in a log.
      outputError: (s) => io.stderr.write(io.stderrIsTTY ? wrapLines(s, io.columns) : s),
      getOutHelpWidth: () => (io.stdoutIsTTY ? io.columns : 80),
      getErrHelpWidth: () => (io.stderrIsTTY ? io.columns : 80),
    });

  const options = (command: Command) => command.optsWithGlobals() as GlobalOptions;
  const app: App = {
    io,
    deps,
    options,
    action(needs, run) {
      return async (...args: unknown[]) => {
        const command = args[args.length - 1] as Command;
        const session = await resolveSession(io, options(command), deps, needs);
        const outcome = await settled(session, () => run(session, ...(args.slice(0, -1) as never)));
        if (needs !== 'nothing') {
          // A command that only reads the profile used a key only when it says so (status, login).
          const used = outcome?.keyInUse ?? (needs === 'key' ? (session as SessionFor<'key'>).credentials : null);
          await afterCommand(session as SessionFor<'profile'>, used, outcome?.list);
        }
        // The command did its work and printed its document whole: its exit status still says the expression failed.
        const queryFailed = session.render.queryFailure();
        if (queryFailed) throw queryFailed;
      };
    },
  };
  return { program, app };
}
