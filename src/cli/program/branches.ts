import type { Command, Option } from 'commander';
import type { App } from './program.js';

/**
 * One command of a group (the program, `keys`, `profile`): the words that
 * run it, and what declares it on the group, given the command words after
 * its own when it alone is declared. `wholeTree`: it reads the whole
 * command tree (completions), so it is declared only with every other.
 */
export interface Branch {
  names: readonly string[];
  register: (group: Command, app: App, words: readonly string[] | undefined) => unknown;
  wholeTree?: boolean;
}

/**
 * Declares on `group` the branch that `words` (the command words after the
 * group's own) name, or every branch when they name none of them: no
 * words, `help`, a typo that wants suggestions. Commander's cost is per
 * option declared, and `keys list` has no use for the options of `serve`,
 * `api` or `keys audit`.
 */
export function declareBranches(group: Command, app: App, branches: readonly Branch[], words: readonly string[] | undefined): void {
  const named = words && words.length > 0 ? branches.find((branch) => branch.names.includes(words[0]!)) : undefined;
  if (named && !named.wholeTree) {
    named.register(group, app, words!.slice(1));
    return;
  }
  for (const branch of branches) branch.register(group, app, undefined);
}

/**
 * The words of `argv` that name the command, as commander reads them: the
 * program's options are taken wherever they are, with their values, and
 * everything from `--` on is an operand no command is named by. Words after
 * a help flag are not read: commander shows the help of the command named
 * before it (`svc keys --help list` is the help of `keys`), which lists its
 * subcommands, so all of them are declared.
 */
export function commandWords(program: Command, argv: readonly string[]): string[] {
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === '--' || word === '--help' || word === '-h') break;
    if (word.startsWith('-')) {
      if (takesNextWord(program.options, word)) i++;
      continue;
    }
    words.push(word);
  }
  return words;
}

/** Whether `word` is one of `options` whose value commander takes from the next word (not `--name=value`). */
export function takesNextWord(options: readonly Option[], word: string): boolean {
  const option = options.find((o) => o.long === word || o.short === word);
  return option !== undefined && (option.required || option.optional) && !word.includes('=');
}
