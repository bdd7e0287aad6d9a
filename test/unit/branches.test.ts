// tier: in-process
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { realDeps } from '../../src/cli/deps.js';
import { buildProgram } from '../../src/cli/run.js';
import { memoryIO } from '../helpers/memory-io.js';

/** Every command of a tree with the words that run it, the program first. */
function commandsOf(command: Command, path: string[] = []): { path: string[]; command: Command }[] {
  return [{ path, command }, ...command.commands.flatMap((sub) => commandsOf(sub, [...path, sub.name()]))];
}

function find(program: Command, path: readonly string[]): Command | undefined {
  let command: Command | undefined = program;
  for (const word of path) command = command?.commands.find((c) => c.name() === word || c.aliases().includes(word));
  return command;
}

const build = (argv?: readonly string[]) => buildProgram(memoryIO().io, realDeps, argv).program;
const whole = commandsOf(build());

/** What a person or a script sees of a command: its help, and whether it runs something of its own. */
function shape(command: Command) {
  return { help: command.helpInformation(), options: command.options.map((o) => o.flags), acts: (command as unknown as { _actionHandler: unknown })._actionHandler !== null };
}

describe('declaring only the branch an invocation runs', () => {
  it.each(whole.map(({ path }) => [path.join(' ') || '(the program)', path] as const))('%s is the same command as in the whole tree', (_, path) => {
    for (const argv of [path, [...path, '--help'], ['--profile', 'keys', '--timeout', '5', ...path], [...path, 'key_1', '--json']]) {
      const partial = find(build(argv), path);
      expect(partial, `svc ${argv.join(' ')}`).toBeDefined();
      expect(shape(partial!)).toEqual(shape(find(build(), path)!));
    }
  });

  it('declares one subcommand for `keys list`, and every command where a word names none', () => {
    expect(commandsOf(build(['keys', 'list', '--json'])).map(({ path }) => path.join(' '))).toEqual(['', 'keys', 'keys list']);
    expect(commandsOf(build(['--base-url', 'http://127.0.0.1:1', 'keys', 'ls'])).map(({ path }) => path.join(' '))).toEqual(['', 'keys', 'keys list']);
    for (const argv of [[], ['help', 'keys'], ['kyes', 'list'], ['keys'], ['keys', 'lsit'], ['completion', 'bash'], ['__complete', 'keys', ''], ['--', 'keys']]) {
      const declared = commandsOf(build(argv)).length;
      const expected = argv[0] === 'keys' ? whole.filter(({ path }) => path.length === 0 || path[0] === 'keys').length : whole.length;
      expect(declared, `svc ${argv.join(' ')}`).toBe(expected);
    }
  });
});
