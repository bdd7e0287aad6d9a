import { CommanderError, type Command, type Option } from 'commander';
import { jsonAsked } from '../program/argv.js';
import { ExitCode, OutputError, UsageError } from '../errors/errors.js';
import { realDeps, type Deps } from '../terminal/deps.js';
import type { IO } from '../terminal/io.js';
import { createProgram, type Program } from '../program/program.js';
import { unknownHelpTopic } from '../domain/suggest.js';
import { commandWords, declareBranches, takesNextWord, type Branch } from '../program/branches.js';
import { reportFailure, type Ending } from '../views/failure.js';
import { createRenderer } from '../terminal/renderer.js';
import { register as registerLogin } from '../commands/login.js';
import { register as registerLogout } from '../commands/logout.js';
import { register as registerStatus } from '../commands/status.js';
import { register as registerKeys } from '../commands/keys/index.js';
import { register as registerProfile } from '../commands/profile/index.js';
import { register as registerServe } from '../commands/serve.js';
import { register as registerApi } from '../commands/api.js';
import { register as registerRun } from '../commands/run.js';
import { register as registerScan } from '../commands/scan/index.js';
import { register as registerCompletion } from '../commands/completion.js';
import { register as registerComplete } from '../commands/complete.js';
import { register as registerInteractive } from '../interactive/command.js';

/** Each command of the program, in the help's order, and what declares it. */
const COMMANDS: readonly Branch[] = [
  { names: ['login'], register: registerLogin },
  { names: ['logout'], register: registerLogout },
  { names: ['status'], register: registerStatus },
  { names: ['keys'], register: registerKeys },
  { names: ['profile'], register: registerProfile },
  { names: ['api'], register: registerApi },
  { names: ['run'], register: registerRun },
  { names: ['scan'], register: registerScan },
  { names: ['serve'], register: registerServe },
  { names: ['completion'], register: registerCompletion, wholeTree: true },
  { names: ['__complete'], register: registerComplete, wholeTree: true },
];

/**
 * The command tree; also the source of the man page and completions.
 * Given the words of an invocation, only the branch they run is declared
 * (src/cli/program/branches.ts); without, the whole tree.
 */
export function buildProgram(io: IO, deps: Deps, argv?: readonly string[]): Program {
  const built = createProgram(io, deps);
  const { program, app } = built;
  declareBranches(program, app, COMMANDS, argv === undefined ? undefined : commandWords(program, argv));
  // Bare `svc` and bare `svc keys` open the manager. Declared after every
  // command: it lets the program take any words, a setting commander copies
  // into each command made after it.
  const keys = program.commands.find((command) => command.name() === 'keys');
  if (keys) registerInteractive(program, keys, app);
  return built;
}

/** The help topics that are no command: `svc help environment`. */
export const HELP_TOPICS = ['environment'] as const;

/**
 * `svc help keys list` as `svc keys list --help`, and `svc keys help list`
 * too: commander's help command explains one word, and none below a command
 * that has an action of its own (`svc keys`). Only a `help` where a command
 * name goes is read so, after any options; anything else is left as typed.
 * A word after `help` that names no command is a topic of HELP_TOPICS, or
 * a usage error with the nearest names (commander would show the
 * top-level help and exit 0, as if it had answered).
 */
export function expandHelp(program: Command, argv: readonly string[]): string[] | { topic: (typeof HELP_TOPICS)[number] } {
  let command = program;
  const options: Option[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === '--') break;
    if (word.startsWith('-')) {
      options.push(...command.options);
      if (takesNextWord(options, word)) i++;
      continue;
    }
    if (word === 'help' && command.commands.length > 0) {
      const path = argv.slice(i + 1);
      if (path.length === 0) return command === program ? [...argv] : [...argv.slice(0, i), '--help'];
      const topic = helpTarget(program, command, path);
      return topic ?? [...argv.slice(0, i), ...path, '--help'];
    }
    const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (!sub) break;
    command = sub;
  }
  return [...argv];
}

/** The topic `path` names below `command`, or null when it names a command; a word that names neither stops svc (exit 2). */
function helpTarget(program: Command, command: Command, path: readonly string[]): { topic: (typeof HELP_TOPICS)[number] } | null {
  let target = command;
  for (const word of path) {
    // Options, and a leaf command's arguments, are left to that command's --help.
    if (word.startsWith('-') || target.commands.length === 0) break;
    const sub = target.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (sub) {
      target = sub;
      continue;
    }
    const topic = HELP_TOPICS.find((name) => name === word);
    if (target === program && topic !== undefined) return { topic };
    unknownHelpTopic(target, word, target === program ? HELP_TOPICS : []);
  }
  return null;
}

const SUCCESS: Ending = { exitCode: ExitCode.ok, signal: null };

/** Parses and runs one `svc` invocation; returns how it ends. */
export async function run(argv: string[], given: IO, deps: Partial<Deps> = {}): Promise<Ending> {
  const { io, stdoutUsed } = watchStdout(given);
  const { program } = buildProgram(io, { ...realDeps, ...deps }, argv);
  try {
    const expanded = expandHelp(program, argv);
    if (!Array.isArray(expanded)) {
      const { environmentHelp } = await import('../docs/environment-help.js');
      // Help's own writer, laid out as the rest of help is: for the terminal, or piped for 80 columns.
      program.configureOutput().writeOut!(environmentHelp());
      return SUCCESS;
    }
    await program.parseAsync(expanded, { from: 'user' });
    // Data that never arrived (a full disk) is a failure, whichever command wrote it.
    const unwritten = await io.stdoutWritten?.();
    if (unwritten) throw new OutputError(unwritten);
    return SUCCESS;
  } catch (error) {
    const options = {
      verbose: program.opts().verbose === true || argv.includes('--verbose'),
      // As typed, not as parsed: a usage error may stop commander before it has read --json.
      json: program.opts().json === true || jsonAsked(argv) ? { stdoutUsed: stdoutUsed() } : undefined,
    };
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) return SUCCESS;
      // Commander has already printed its message or the help text: only --json's document is left to print.
      if (!options.json) return { exitCode: ExitCode.usage, signal: null };
      return reportFailure(new UsageError(commanderMessage(error)), { ...options, said: true }, await createRenderer(io, { quiet: false }));
    }
    // A stop signal svc held to finish what was in hand (an answer, a key of a batch, a revoke) and that work then failed:
    // svc ends by it all the same, as it said it would, so that a loop around svc stops. svc serve's SIGTERM is how it
    // is stopped, not a stop held for work in hand: a failure of its shutdown is its own.
    const held = commandWords(program, argv)[0] === 'serve' ? null : (io.heldSignal?.() ?? null);
    return reportFailure(error, { ...options, held }, await createRenderer(io, { quiet: false }));
  }
}

/** Commander's message without its `error: ` prefix, a line each (its did-you-mean is a line of its own); the help it printed instead of one, named. */
function commanderMessage(error: CommanderError): string[] {
  if (error.code === 'commander.help' || error.code === 'commander.executeSubCommandAsync') return ['No command given: see the help on stderr.'];
  return error.message.replace(/^error: /, '').split('\n');
}

/**
 * `io` whose stdout tells whether anything was written to it: a failure
 * under --json prints its document only on a stdout still empty
 * (views/failure.ts). Built lazily, as the process's own stdout is (io.ts).
 */
function watchStdout(io: IO): { io: IO; stdoutUsed: () => boolean } {
  let used = false;
  let watched: NodeJS.WritableStream | undefined;
  const watch = (stream: NodeJS.WritableStream) =>
    new Proxy(stream, {
      get(target, key) {
        if (key === 'write') {
          return (chunk: string | Uint8Array, ...rest: unknown[]) => {
            if (chunk.length > 0) used = true;
            return (target.write as (...args: unknown[]) => boolean)(chunk, ...rest);
          };
        }
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  const watching = Object.create(io, { stdout: { get: () => (watched ??= watch(io.stdout)) } }) as IO;
  return { io: watching, stdoutUsed: () => used };
}
