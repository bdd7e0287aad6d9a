// tier: in-process
// The prompts' own drawing and keys are in test/e2e/prompts.test.ts; here, what the command does with the answers.
import { describe, expect, it } from 'vitest';
import { useCommandTest } from '../../helpers/command-test.js';

const { onTerminal } = useCommandTest({ plan: 'pro' });

describe('on a terminal', () => {
  it('keys create asks for a missing name, then shows the secret with the warning', async () => {
    const result = await onTerminal(['keys', 'create'], [{ text: 'asked-for' }]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.asked[0]).toBe('Name for the new key:');
    expect(result.stderr).toContain("Created key 'asked-for'");
    expect(result.stdout).toMatch(/^\n {2}sk_[A-Za-z0-9]{64}\n$/);
    expect(result.stderr).toContain('only time this secret is shown');
  });
});
