import { execa } from 'execa';
import { realDeps } from '../../src/cli/deps.js';
import { buildProgram } from '../../src/cli/run.js';
import { allCommands, describeProgram, type CommandDoc } from '../../src/cli/docs/tree.js';
import { memoryIO } from '../helpers/memory-io.js';

/** The program as the docs see it, built from the sources under test. */
export function program() {
  return buildProgram(memoryIO().io, realDeps).program;
}

export function tree(): { root: CommandDoc; commands: CommandDoc[] } {
  const root = describeProgram(program());
  return { root, commands: allCommands(root) };
}

/** Whether a program is on PATH, so a test can skip saying why. */
export async function installed(command: string): Promise<boolean> {
  const { exitCode } = await execa('sh', ['-c', 'command -v "$1"', 'sh', command], { reject: false });
  return exitCode === 0;
}
