// tier: in-process
/**
 * docs/contract.md §C4: one deadline per command, the timeout plus
 * --max-wait, on a clock that leaves out the time a question waited for a
 * person: a confirmation answered after twenty minutes, or a manager's
 * create whose expiry was typed after ten, still gets its whole timeout,
 * never "no answer within 1 ms". The clock is svc's own (deps.now), moved
 * by the questions themselves.
 */
import { describe, expect, it } from 'vitest';
import type { Prompter } from '../../src/cli/terminal/prompt.js';
import { useCommandTest } from '../helpers/command-test.js';
import { scriptedPrompter, type Step } from '../helpers/prompter.js';
import { svc } from '../helpers/in-process.js';

const local = useCommandTest({ plan: 'pro' });

/** A person who takes `minutes` over every answer, on svc's clock. */
function slowPerson(script: Step[], minutes: number) {
  let laterMs = 0;
  const scripted = scriptedPrompter(script);
  const slow = Object.fromEntries(
    Object.entries(scripted).map(([name, ask]) => [
      name,
      typeof ask !== 'function'
        ? ask
        : async (...args: unknown[]) => {
            laterMs += minutes * 60_000;
            return (ask as (...a: unknown[]) => unknown)(...args);
          },
    ]),
  ) as unknown as Prompter;
  return { prompter: slow, now: () => Date.now() + laterMs };
}

describe('time a person takes at a question is not the server\'s', () => {
  it('keys revoke: the DELETE after a confirmation answered 20 minutes later gets its timeout, and the key is revoked', async () => {
    const key = await local.create('slow-confirm');
    const person = slowPerson([{ confirm: true }], 20);
    const result = await svc(['keys', 'revoke', key.id], local.env, { tty: true, columns: 120, deps: person });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain(`Revoked 'slow-confirm' (${key.id}).`);
    expect(result.stderr).not.toContain('no answer within');
  });

  it('the manager: a create whose name and expiry took ten minutes each is made', async () => {
    const person = slowPerson([{ menu: 'Create a key' }, { text: 'slow-manager' }, { text: '' }, { pause: true }, { menu: null }], 10);
    const result = await svc([], local.env, { tty: true, columns: 120, rows: 40, deps: person });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain("Created key 'slow-manager'");
    expect(result.stderr).not.toContain('no answer within');
  });
});
