// tier: process
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { renderManPage } from '../../scripts/man-page.js';
import { ENVIRONMENT } from '../../src/cli/terminal/environment.js';
import { ExitCode } from '../../src/cli/errors/errors.js';
import { installed, program, tree } from './helpers.js';

const repo = resolve(import.meta.dirname, '../..');
const { version } = JSON.parse(readFileSync(resolve(repo, 'package.json'), 'utf8')) as { version: string };
const page = renderManPage(program(), { version });

/** How the page spells plain ASCII text. */
const ROFF: Record<string, string> = { '\\': '\\e', '-': '\\-', "'": '\\(aq', '`': '\\(ga', '~': '\\(ti', '^': '\\(ha', '"': '\\(dq' };
const roff = (s: string) => s.replace(/[-\\'`~^"]/g, (ch) => ROFF[ch]!);

describe('man/svc.1', () => {
  it('is the page the current command tree generates', () => {
    const committed = readFileSync(resolve(repo, 'man/svc.1'), 'utf8');
    expect(committed, 'man/svc.1 is out of date with the commands: run `npm run man` and commit man/svc.1').toBe(page);
  });

  it('is what `npm run man` writes', async () => {
    const work = mkdtempSync(join(tmpdir(), 'svc-man-'));
    try {
      await execa('node', [resolve(repo, 'scripts/gen-man.mjs'), join(work, 'svc.1')]);
      expect(readFileSync(join(work, 'svc.1'), 'utf8')).toBe(page);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });

  describe('rendered by groff', () => {
    let groff = false;
    beforeAll(async () => {
      groff = await installed('groff');
    });

    it('raises no warning with -man -ww', async ({ skip }) => {
      if (!groff) skip('groff is not installed, so the page cannot be checked for warnings');
      const result = await execa('groff', ['-man', '-ww', '-Tutf8'], { input: page });
      expect(result.stderr).toBe('');
      expect(result.stdout).toContain('SVC(1)');
    });
  });

  it('has the sections of a manual page, in order', () => {
    const sections = [...page.matchAll(/^\.SH (.+)$/gm)].map((m) => m[1]!.replaceAll('"', ''));
    expect(sections).toEqual(['NAME', 'SYNOPSIS', 'DESCRIPTION', 'COMMANDS', 'OPTIONS', 'ENVIRONMENT', 'FILES', 'EXIT STATUS', 'EXAMPLES', 'SEE ALSO']);
  });

  it('documents every command with its options, aliases and examples', () => {
    for (const cmd of tree().commands.filter((c) => !c.isHelp)) {
      expect(page, cmd.path.join(' ')).toContain(`.SS "${roff(cmd.path.join(' '))}"`);
      for (const alias of cmd.aliases) expect(page, `alias ${alias}`).toContain(`\\fB${roff(alias)}\\fR`);
      for (const opt of cmd.options.filter((o) => !o.isHelp)) expect(page, `${cmd.path.join(' ')} ${opt.long}`).toContain(roff(opt.long!));
      for (const example of cmd.examples) expect(page).toContain(`$ ${roff(example)}`);
    }
  });

  it('documents every global option, environment variable and exit code', () => {
    for (const opt of tree().root.options) expect(page).toContain(`\\fB${roff(opt.long!)}\\fR`);
    const environment = page.slice(page.indexOf('.SH ENVIRONMENT'), page.indexOf('.SH FILES'));
    const entries = [...environment.matchAll(/^\.B "(.+)"$/gm)].map((m) => m[1]);
    expect(entries).toEqual(ENVIRONMENT.map(({ names }) => roff(names.join(', '))));
    const exitStatus = page.slice(page.indexOf('.SH EXIT STATUS'), page.indexOf('.SH EXAMPLES'));
    expect([...exitStatus.matchAll(/^\.B (\d+)$/gm)].map((m) => Number(m[1]))).toEqual(Object.values(ExitCode));
  });

  it('shows no literal backticks and no empty defaults', () => {
    expect(page).not.toContain('\\(ga');
    expect(page).not.toContain('(default: [])');
    expect(page).toContain('in \\fBps\\fR and in shell history');
  });

  it('lists the inherited global options under every command, as --help does', () => {
    const sections = page.split('\n.SS ').slice(1);
    expect(sections.length).toBe(tree().commands.filter((c) => !c.isHelp || c.path.length === 2).length);
    for (const section of sections) {
      const inherited = section.split('\n').find((line) => line.startsWith('Inherited options'));
      expect(inherited, section.split('\n')[0]).toBeDefined();
      for (const opt of tree().root.options.filter((o) => !o.isHelp)) expect(inherited).toContain(`\\fB${roff(opt.long!)}\\fR`);
    }
  });

  it('keeps text lines from being read as requests, and ends in a newline', () => {
    const lines = page.split('\n');
    expect(lines.pop()).toBe('');
    for (const line of lines) {
      if (line.startsWith('.')) expect(line, line).toMatch(/^\.(\\"|(TH|SH|SS|PP|TP|B|br|RS|RE|nf|fi|PD|nh|ad)( |$))/);
      expect(line, line).not.toMatch(/^'/);
    }
  });
});
