// tier: in-process
/**
 * Help topics (issue 38): `svc help environment` lists src/cli/terminal/environment.ts,
 * the one list; a word after `help` that names nothing is exit 2 with the
 * nearest names, not the top-level help and 0.
 */
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT } from '../../../src/cli/terminal/environment.js';
import { svc } from '../../helpers/in-process.js';

describe('svc help environment', () => {
  it('lists every variable of src/cli/terminal/environment.ts with its description, within 80 columns, exit 0', async () => {
    const result = await svc(['help', 'environment'], {});
    expect(result.exitCode, result.stderr).toBe(0);
    const flat = result.stdout.replace(/\n +/g, ' ');
    for (const { names, description } of ENVIRONMENT) {
      expect(result.stdout).toContain(`\n  ${names.join(', ')}\n`);
      expect(flat).toContain(description);
    }
    for (const line of result.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });

  it('is named in the top-level help', async () => {
    expect((await svc(['--help'], {})).stdout).toContain('svc help environment lists the environment variables svc reads.');
  });
});

describe('an unknown help topic', () => {
  it.each([
    [['help', 'nosuchtopic'], "error: no help on 'nosuchtopic'\nSee 'svc help'."],
    [['help', 'kyes'], "error: no help on 'kyes'\nDid you mean 'svc help keys'?\nSee 'svc help'."],
    [['help', 'enviroment'], "error: no help on 'enviroment'\nDid you mean 'svc help environment'?"],
    [['help', 'keys', 'lst'], "error: no help on 'lst'\nDid you mean 'svc help keys list'?\nSee 'svc help keys'."],
    [['keys', 'help', 'rotat'], "Did you mean 'svc help keys rotate'?"],
  ])('svc %j exits 2 with a did-you-mean, and prints no help', async (asked, said) => {
    const result = await svc(asked, {});
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(said);
    expect(result.stdout).toBe('');
  });

  it('the arguments of a command with no subcommands are left to its help', async () => {
    expect((await svc(['help', 'keys', 'revoke', 'key_1'], {})).exitCode).toBe(0);
  });
});
