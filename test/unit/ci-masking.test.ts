// tier: in-process
/**
 * The workflow command that registers a secret with GitHub Actions' log
 * masking (src/cli/terminal/ci-masking.ts): whatever the secret holds, each
 * line is one command that the runner reads back as a line of the secret.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addMaskCommands, onGitHubActions } from '../../src/cli/terminal/ci-masking.js';

/** What the runner makes of a command's value: its escapes undone (ActionCommand.UnescapeData). */
const unescaped = (value: string) => value.replaceAll('%0D', '\r').replaceAll('%0A', '\n').replaceAll('%25', '%');

describe('addMaskCommands', () => {
  it("registers a key, of the service's form, in one command", () => {
    const key = `sk_${'aZ9'.repeat(21)}Q`;
    expect(addMaskCommands(key)).toEqual([`::add-mask::${key}`]);
  });

  it('property: no secret can end a command early or start another; each line of it is registered as it is', () => {
    const piece = fc.constantFrom('a', '%', '%0A', '%25', '\n', '\r', '\r\n', ' ', '::', '::add-mask::', '::stop-commands::x', '\u001b[31m', 'é', '\t');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }).map((parts) => parts.join('')), (secret) => {
        const commands = addMaskCommands(secret);
        const text = commands.join('\n');
        // Split as the runner splits what it reads: one command a line, each from its start.
        expect(text.split(/\r\n|\r|\n/).filter((line) => line !== '')).toEqual(commands);
        for (const command of commands) expect(command.startsWith('::add-mask::')).toBe(true);
        const lines = secret.split(/\r\n|\r|\n/).filter((line) => line.trim() !== '');
        expect(commands.map((command) => unescaped(command.slice('::add-mask::'.length)))).toEqual(lines);
      }),
      { numRuns: 500 },
    );
  });
});

describe('onGitHubActions', () => {
  it('is GITHUB_ACTIONS=true, as the runner sets it, and nothing else', () => {
    expect(onGitHubActions({ GITHUB_ACTIONS: 'true' })).toBe(true);
    for (const env of [{}, { GITHUB_ACTIONS: '' }, { GITHUB_ACTIONS: 'false' }, { GITHUB_ACTIONS: 'TRUE' }, { CI: 'true' }, { GITLAB_CI: 'true', CI: 'true' }]) {
      expect(onGitHubActions(env)).toBe(false);
    }
  });
});
