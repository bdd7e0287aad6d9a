import type { Argument, Command, Help, Option } from 'commander';

/** What the completion scripts ask for (commands/complete.ts answers); the command tree names which arguments and options take which. */
export const DYNAMIC_KINDS = ['key-ids', 'profiles'] as const;
export type DynamicKind = (typeof DYNAMIC_KINDS)[number];

/**
 * The command tree as the man page and the completion scripts see it. Both
 * are generated from commander itself, through its Help class, so they say
 * what `--help` says and cannot drift from the commands.
 */
export interface CommandDoc {
  name: string;
  aliases: string[];
  /** Names from the program down, e.g. ['svc', 'keys', 'list']. */
  path: string[];
  /** What follows the path in a synopsis, e.g. '[options] [ids...]'. */
  usage: string;
  description: string;
  arguments: { term: string; description: string }[];
  /** Its own options, help included; an ancestor's options are global to it. */
  options: OptionDoc[];
  /** Prose of the 'after' help text, one string per paragraph. */
  notes: string[];
  /** Example command lines of the 'after' help text, without the '$ ' prompt. */
  examples: string[];
  commands: CommandDoc[];
  /** Commander's `help [command]`, which exists at every level that has subcommands. */
  isHelp: boolean;
  /** Words a positional argument may be: for a help command, the commands it can explain. */
  argumentValues: string[];
  /** What its positional arguments are, when `svc __complete` can list them: key ids. */
  dynamicArguments: DynamicKind | undefined;
  /** Its arguments, after `--`, are a command line of their own (`svc run`): completed as that command's. */
  runsCommand: boolean;
}

export interface OptionDoc {
  /** As `--help` shows it: '-q, --quiet', '--base-url <url>'. */
  term: string;
  short: string | undefined;
  long: string | undefined;
  /** The value's placeholder ('url' for `<url>`), when the option takes one. */
  valueName: string | undefined;
  choices: string[];
  /** As `--help` shows it, with the default and choices. */
  description: string;
  /** Commander's built-in `-h, --help`, which every command has. */
  isHelp: boolean;
  /** What its value is, when `svc __complete` can list them: profile names. */
  dynamicValues: DynamicKind | undefined;
}

/** Arguments and options whose values the completion scripts ask svc for. */
const KEY_ID_ARGUMENTS = new Set(['id', 'ids']);
const DYNAMIC_OPTIONS: Record<string, DynamicKind> = { '--profile': 'profiles' };

export function describeProgram(program: Command): CommandDoc {
  return describe(program, program.createHelp(), [], false, []);
}

/** Every command below `doc`, depth first, help commands included. */
export function allCommands(doc: CommandDoc): CommandDoc[] {
  return doc.commands.flatMap((sub) => [sub, ...allCommands(sub)]);
}

function describe(cmd: Command, help: Help, parentPath: string[], isHelp: boolean, siblings: string[]): CommandDoc {
  const path = [...parentPath, cmd.name()];
  const { notes, examples } = splitAfterHelp(afterHelpText(cmd));
  const visible = help.visibleCommands(cmd);
  const ownNames = visible.filter((sub) => cmd.commands.includes(sub)).map((sub) => sub.name());
  return {
    name: cmd.name(),
    aliases: cmd.aliases(),
    path,
    usage: cmd.usage(),
    description: help.commandDescription(cmd),
    arguments: help.visibleArguments(cmd).map((arg) => ({
      term: help.argumentTerm(arg),
      description: help.argumentDescription(arg),
    })),
    // Commander's help option is the one visible option it does not list in `options`.
    options: help.visibleOptions(cmd).map((opt) => describeOption(opt, help, !cmd.options.includes(opt))),
    notes,
    examples,
    // Commander's help command is the one visible command it does not list in `commands`.
    commands: visible.map((sub) => describe(sub, help, path, !cmd.commands.includes(sub), ownNames)),
    isHelp,
    argumentValues: isHelp ? siblings : [],
    dynamicArguments: cmd.registeredArguments.some((arg: Argument) => KEY_ID_ARGUMENTS.has(arg.name()))
      ? 'key-ids'
      : cmd.registeredArguments.some((arg: Argument) => arg.name() === 'profile')
        ? 'profiles'
        : undefined,
    runsCommand: cmd.registeredArguments.some((arg: Argument) => arg.name() === 'command' && arg.variadic),
  };
}

function describeOption(opt: Option, help: Help, isHelp: boolean): OptionDoc {
  const value = /[<[]([^>\]]+)[>\]]/.exec(opt.flags);
  return {
    term: help.optionTerm(opt),
    short: opt.short,
    long: opt.long,
    valueName: value?.[1],
    choices: opt.argChoices ?? [],
    description: help.optionDescription(opt),
    isHelp,
    dynamicValues: opt.long === undefined ? undefined : DYNAMIC_OPTIONS[opt.long],
  };
}

/**
 * The text a command added with `.addHelpText('after', …)`. Commander keeps
 * it only as a listener that `outputHelp()` calls, so print the help into a
 * string and keep what follows the generated part.
 */
function afterHelpText(cmd: Command): string {
  const saved = cmd.configureOutput();
  let written = '';
  cmd.configureOutput({ writeOut: (text) => (written += text), getOutHasColors: () => false });
  try {
    cmd.outputHelp();
    const generated = cmd.helpInformation();
    return written.slice(written.indexOf(generated) + generated.length);
  } finally {
    cmd.configureOutput(saved);
  }
}

/** Splits "prose…\n\nExamples:\n  $ svc …" (or "Example:") into paragraphs and example lines. */
function splitAfterHelp(text: string): { notes: string[]; examples: string[] } {
  const [prose = '', exampleBlock = ''] = text.split(/^Examples?:[ \t]*$/m);
  const notes = prose
    .split(/\n[ \t]*\n/)
    .map((paragraph) => paragraph.trim().replace(/\s*\n\s*/g, ' '))
    .filter(Boolean);
  const examples = exampleBlock
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('$ '))
    .map((line) => line.slice(2));
  return { notes, examples };
}
