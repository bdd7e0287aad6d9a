import type { Command } from 'commander';
import type { App } from './program.js';

/**
 * One command of a group (the program, `keys`, `profile`): the words that
 * run it, and what declares it on the group. `wholeTree`: it reads the
 * whole command tree (completions), so it is declared only with every
 * other command.
 */
export interface Branch<R = unknown> {
  names: readonly string[];
  register: (group: Command, app: App, words: readonly string[] | undefined) => R;
  wholeTree?: boolean;
}

/**
 * The branches to declare for an invocation whose command words below the
 * group are `words`: only the one they name, or, when they name none of
 * them (no words, `help`, a typo that wants suggestions) or are unknown,
 * every one. Commander's cost is per option declared, and `keys list` has
 * no use for the options of `serve`, `api` or `keys audit`.
 */
export function branchesFor<B extends Branch>(branches: readonly B[], words: readonly string[] | undefined): readonly B[] {
  if (words === undefined || words.length === 0) return branches;
  const named = branches.find((branch) => branch.names.includes(words[0]!));
  return named && !named.wholeTree ? [named] : branches;
}

/**
 * The words of `argv` that are not options, as commander reads them: the
 * program's options are taken wherever they are, with their values, and
 * everything from `--` on is an operand no command is named by.
 */
export function commandWords(program: Command, argv: readonly string[]): string[] {
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === '--') break;
    if (word.startsWith('-')) {
      const option = program.options.find((o) => o.long === word || o.short === word);
      if (option && (option.required || option.optional)) i++;
      continue;
    }
    words.push(word);
  }
  return words;
}
