import { execa } from 'execa';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { realDeps } from '../../src/cli/terminal/deps.js';
import { buildProgram } from '../../src/cli/app/run.js';
import { allCommands, describeProgram, type CommandDoc } from '../../src/cli/docs/tree.js';
import { SVC_BIN } from '../helpers/cli.js';
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

const README = resolve(import.meta.dirname, '../../README.md');

/**
 * The first ```sh block of README.md's section `heading` (`## Name` or
 * `### Name`, as written there), before the next heading of its level or
 * above (`#` alone is the title, and a shell comment in a block).
 */
export function readmeExample(heading: string): string {
  const text = readFileSync(README, 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  if (start === -1) throw new Error(`README.md has no section "${heading}"`);
  const level = /^#+/.exec(heading)![0].length;
  const next = new RegExp(`\\n#{2,${level}} `, 'g');
  next.lastIndex = start + heading.length + 1;
  const end = next.exec(text)?.index ?? text.length;
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(start, end));
  if (!block) throw new Error(`the section "${heading}" has no sh example`);
  return block[1]!;
}

/** Under `dir`: `bin`, holding an `svc` that runs the built bin/svc.js (for PATH), and an empty `work` directory. */
export function svcOnPath(dir: string): { bin: string; work: string } {
  const bin = join(dir, 'bin');
  const work = join(dir, 'work');
  for (const d of [bin, work]) mkdirSync(d);
  writeFileSync(join(bin, 'svc'), `#!/bin/sh\nexec "${process.execPath}" "${SVC_BIN}" "$@"\n`);
  chmodSync(join(bin, 'svc'), 0o755);
  return { bin, work };
}
