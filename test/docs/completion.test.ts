// tier: process
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, svc } from '../helpers/in-process.js';
import { installed, tree } from './helpers.js';

const SHELLS = ['bash', 'zsh', 'fish'] as const;
const { root, commands } = tree();
const dir = mkdtempSync(join(tmpdir(), 'svc-completion-'));
const scripts: Record<string, { text: string; file: string }> = {};
/**
 * A shell whose `svc` answers nothing, as when none is installed: what the
 * scripts offer by themselves, whatever svc the user has on PATH
 * (dynamic-completion.test.ts drives the real one).
 */
const userShell = (() => {
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'svc'), '#!/bin/sh\n');
  chmodSync(join(bin, 'svc'), 0o755);
  return { env: cleanEnv({ PATH: `${bin}:${process.env.PATH}` }), extendEnv: false };
})();

beforeAll(async () => {
  for (const shell of SHELLS) {
    const result = await svc(['completion', shell], {});
    expect(result.exitCode, result.stderr).toBe(0);
    const file = join(dir, `svc.${shell}`);
    writeFileSync(file, result.stdout);
    scripts[shell] = { text: result.stdout, file };
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** How each script names a flag: fish declares `-s q` and `-l quiet`. */
function flagIn(shell: (typeof SHELLS)[number], flag: string): string {
  if (shell !== 'fish') return `${flag}`;
  return flag.startsWith('--') ? `-l ${flag.slice(2)}` : `-s ${flag.slice(1)}`;
}

describe.each(SHELLS)('svc completion %s', (shell) => {
  it('names every command, subcommand, alias and flag', () => {
    const { text } = scripts[shell]!;
    for (const cmd of commands) {
      for (const name of [cmd.name, ...cmd.aliases]) expect(text, cmd.path.join(' ')).toContain(`'${name}'`);
      for (const opt of [...root.options, ...cmd.options]) {
        for (const flag of [opt.short, opt.long].filter((f) => f !== undefined)) {
          expect(text, `${cmd.path.join(' ')} ${flag}`).toContain(flagIn(shell, flag));
        }
      }
    }
  });

  it('passes the shell\'s syntax check', async ({ skip }) => {
    if (!(await installed(shell))) skip(`${shell} is not installed, so its script cannot be checked`);
    const check = shell === 'fish' ? ['--no-execute', scripts[shell]!.file] : ['-n', scripts[shell]!.file];
    const result = await execa(shell, check, { reject: false });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
  });
});

describe('bash completion at work', () => {
  /** COMPREPLY for the words typed so far; the last word is the one being completed. */
  async function complete(...words: string[]): Promise<string[]> {
    const { stdout } = await execa('bash', [
      '-c',
      'source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _svc; printf "%s\\n" "${COMPREPLY[@]}"',
      scripts.bash!.file,
      ...words,
    ], userShell);
    return stdout.split('\n').filter(Boolean);
  }

  const keys = commands.find((c) => c.path.join(' ') === 'svc keys')!;

  it('completes commands and subcommands', async () => {
    expect(await complete('svc', 'ke')).toEqual(['keys']);
    expect(await complete('svc', 'keys', '')).toEqual(keys.commands.filter((c) => !c.isHelp).map((c) => c.name));
    expect(await complete('svc', 'keys', 'r')).toEqual(['revoke', 'rotate']);
    expect(await complete('svc', 'help', 'ke')).toEqual(['keys']);
  });

  it('skips the value of an option that takes one, split at = or not', async () => {
    expect(await complete('svc', '--profile', 'work', 'keys', 'l')).toEqual(['list']);
    expect(await complete('svc', '--profile', '=', 'work', 'keys', 'l')).toEqual(['list']);
    expect(await complete('svc', '--profile', '')).toEqual([]);
    expect(await complete('svc', '--max-wait', '3', 'keys', 'list', '--pro')).toEqual(['--profile']);
  });

  it('offers aliases only when no name fits, and follows them', async () => {
    expect(await complete('svc', 'keys', 'rm')).toEqual(['rm']);
    expect(await complete('svc', 'keys', 'rm', '--if')).toEqual(['--if-exists']);
  });

  it('completes global and per-command flags, and the choices of an option', async () => {
    expect(await complete('svc', 'keys', 'create', '--expires-')).toEqual(['--expires-in', '--expires-at']);
    expect(await complete('svc', 'serve', '--js')).toEqual(['--json']);
    expect(await complete('svc', 'keys', 'audit', '--s')).toEqual(['--skip-disabled', '--strict']);
    expect(await complete('svc', '--js')).toEqual(['--json']);
    const plan = commands.find((c) => c.name === 'serve')!.options.find((o) => o.long === '--plan')!;
    expect(await complete('svc', 'serve', '--plan', '')).toEqual(plan.choices);
  });

  it("completes the command line after svc run's --: a command's name first", async () => {
    expect(await complete('svc', 'run', '--ephemeral', '30m', '--', 'ech')).toContain('echo');
    expect(await complete('svc', 'run', '--', 'echo', '--js')).toEqual([]);
    expect(await complete('svc', 'keys', 'list', '--', 'ech')).toEqual([]);
  });
});

describe('fish completion at work', () => {
  const complete = async (line: string) => {
    const { stdout } = await execa('fish', ['-c', `source ${scripts.fish!.file}; complete -C '${line}'`], userShell);
    return stdout.split('\n').map((entry) => entry.split('\t')[0]);
  };

  it('completes subcommands after an option value, offering aliases only when no name fits', async ({ skip }) => {
    if (!(await installed('fish'))) skip('fish is not installed');
    expect(await complete('svc --profile work keys l')).toEqual(['list']);
    expect(await complete('svc keys rm')).toEqual(['rm']);
    expect(await complete('svc keys ')).not.toContain('ls');
  });

  it("completes the command line after svc run's --, and nothing of svc's there", async ({ skip }) => {
    if (!(await installed('fish'))) skip('fish is not installed');
    expect(await complete('svc run --ephemeral 30m -- ech')).toContain('echo');
    expect(await complete('svc run -- echo --js')).toEqual(['']);
    expect(await complete('svc run -- ls --js')).not.toContain('--json');
    expect(await complete('svc keys list -- ech')).toEqual(['']);
    expect(await complete('svc run --js')).toEqual(['--json']);
  });
});

describe('svc completion without a known shell', () => {
  it('prints the usage and how to install for each shell, exit 2', async () => {
    const result = await svc(['completion'], {});
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('svc completion bash|zsh|fish');
    for (const shell of SHELLS) expect(result.stderr).toMatch(new RegExp(`^  ${shell}:`, 'm'));
  });

  it('rejects an unknown shell as a usage error', async () => {
    const result = await svc(['completion', 'tcsh'], {});
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("Unknown shell 'tcsh'");
  });
});
