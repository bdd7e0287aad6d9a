// tier: in-process
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { realDeps } from '../../src/cli/terminal/deps.js';
import { buildProgram } from '../../src/cli/app/run.js';
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

/** What a person or a script sees of a command: its help, whether it runs something of its own, and whether it takes words beyond its arguments. */
function shape(command: Command) {
  const internals = command as unknown as { _actionHandler: unknown; _allowExcessArguments: boolean };
  return {
    help: command.helpInformation(),
    options: command.options.map((o) => o.flags),
    acts: internals._actionHandler !== null,
    excess: internals._allowExcessArguments,
  };
}

describe('declaring only the branch an invocation runs', () => {
  it.each(whole.map(({ path }) => [path.join(' ') || '(the program)', path] as const))('%s is the same command as in the whole tree', (_, path) => {
    for (const argv of [path, [...path, '--help'], ['--profile', 'keys', '--timeout', '5', ...path], [...path, 'key_1', '--json']]) {
      const partial = find(build(argv), path);
      expect(partial, `svc ${argv.join(' ')}`).toBeDefined();
      expect(shape(partial!)).toEqual(shape(find(build(), path)!));
    }
  });

  it.each(whole.map(({ path }) => [path.join(' ') || '(the program)', path] as const))('%s: a help flag anywhere shows the command named before it, as the whole tree has it', (_, path) => {
    for (let at = 0; at <= path.length; at++) {
      for (const flag of ['--help', '-h']) {
        const argv = [...path.slice(0, at), flag, ...path.slice(at)];
        const shown = path.slice(0, at);
        expect(shape(find(build(argv), shown)!), `svc ${argv.join(' ')}`).toEqual(shape(find(build(), shown)!));
      }
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
