// What bin/load-bundle.js must know of svc's command line to tell which
// command a run is, and so which code cache to load, before the bundle (and
// commander in it) is loaded: written at build time from the commander
// program itself (scripts/build.mjs), beside the bundle, so that it cannot
// drift from the program as a hand-kept copy in the loader could.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadProgram } from './load-sources.mjs';

/** The file beside dist/main.js that bin/load-bundle.js reads. */
export const GRAMMAR_FILE = 'argv-grammar.json';

/**
 * The grammar of `program` (a commander Command):
 * - valueOptions: its options that take a value, whose value is not a command word;
 * - groups: the commands whose next word picks what runs, their
 *   subcommands (`keys list`), and the completer's kind (`__complete
 *   key-ids`, `__complete profiles`); after any other command the next word
 *   is an argument (`run --name deploy-42`), and a cache per argument would
 *   be a new file for every name, duration or path given.
 */
export function argvGrammar(program) {
  const completer = program.commands.find((command) => command.name() === '__complete');
  if (!completer) throw new Error('the program has no __complete command, which scripts/argv-grammar.mjs counts as a group');
  return {
    valueOptions: program.options.filter((option) => option.required || option.optional).map((option) => option.long).sort(),
    groups: [...program.commands.filter((command) => command.commands.length > 0), completer].map((command) => command.name()).sort(),
  };
}

/** Writes the grammar of svc's program (from the sources, as built for `version`) into `dir`. */
export async function writeArgvGrammar(dir, version) {
  const { program } = await loadProgram('argv-grammar', version);
  await writeFile(join(dir, GRAMMAR_FILE), `${JSON.stringify(argvGrammar(program))}\n`);
}
