// tier: in-process
import { describe, expect, it } from 'vitest';
import { svc } from '../../helpers/in-process.js';
import { COMMAND_SYNONYMS, OPTION_SYNONYM_FLAGS } from '../../../src/cli/domain/suggest.js';

/** No server is asked: every line here is refused before any request, or is help. */
const NOWHERE = { SVC_BASE_URL: 'http://127.0.0.1:9' };

describe('a word from another CLI (issue 46)', () => {
  it.each(COMMAND_SYNONYMS.map(([typed, meant]) => [typed, meant]))('%s is pointed at %s (exit 2), which svc runs', async (typed, meant) => {
    const words = typed.split(' ').slice(1);
    const result = await svc([...words, 'x'], NOWHERE);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    const [first, suggestion] = result.stderr.split('\n');
    expect(first).toMatch(/^error: unknown command '/);
    expect(suggestion).toBe(`Did you mean '${meant} x'?`);
    // What it names is a command svc has: its help answers.
    const help = await svc([...meant.split(' ').slice(1), '--help'], NOWHERE);
    expect(help.exitCode).toBe(0);
  });

  it('is only suggested: nothing runs, not even the rest of the line as a key id', async () => {
    const result = await svc(['keys', 'delete', 'key_1', '--yes', '--json'], NOWHERE);
    expect(result.exitCode).toBe(2);
    expect(JSON.parse(result.stdout)).toEqual({ error: { message: "unknown command 'delete'\nDid you mean 'svc keys revoke key_1 --yes'?\nSee 'svc keys --help'.", exitCode: 2 } });
  });

  it('a subcommand of keys typed without keys', async () => {
    expect((await svc(['create', 'ci'], NOWHERE)).stderr).toBe("error: unknown command 'create'\nDid you mean 'svc keys create ci'?\nSee 'svc --help'.");
    expect((await svc(['delete', 'ci'], NOWHERE)).stderr).toContain("Did you mean 'svc keys revoke ci'?");
  });
});

describe('an option from another CLI (issue 46)', () => {
  const where = (flag: string) => (['--force', '--confirm'].includes(flag) ? ['keys', 'revoke', 'key_1'] : ['keys', 'list']);

  it.each(OPTION_SYNONYM_FLAGS.map((flag) => [flag]))('%s is pointed at what svc takes (exit 2)', async (flag) => {
    const args = where(flag);
    const result = await svc([...args, flag], NOWHERE);
    expect(result.exitCode).toBe(2);
    const [first, suggestion] = result.stderr.split('\n');
    expect(first).toBe(`error: unknown option '${flag}'`);
    const named = /^Did you mean 'svc [^']*?(--[a-z-]+)'\?$/.exec(suggestion ?? '');
    if (named === null) {
      expect(suggestion).toContain('svc never takes a key as an argument');
      return;
    }
    // The option it names is one this command takes.
    const help = await svc([...args.filter((a) => !a.startsWith('key_')), '--help'], NOWHERE);
    expect(help.stdout).toMatch(new RegExp(`(^|[ ,])${named[1]}\\b`, 'm'));
  });

  it('--token to login names --with-key, and a value after = is never printed back', async () => {
    const result = await svc(['login', `--token=sk_${'a'.repeat(64)}`], NOWHERE);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe("error: unknown option '--token'\nDid you mean 'svc login --with-key'? It reads the key from stdin: svc never takes a key as an argument.");
  });

  it('an option unknown elsewhere too is left to the near spellings, without its value', async () => {
    const result = await svc(['keys', 'list', '--jsn=sk_secret'], NOWHERE);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).not.toContain('sk_secret');
    expect(result.stderr).toContain("unknown option '--jsn'");
  });

  it('--force where --force is an option of the command is that option, not --yes', async () => {
    const result = await svc(['keys', 'list', '--force'], NOWHERE);
    expect(result.stderr).toBe("error: unknown option '--force'");
  });
});
