// tier: in-process
import { describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../../helpers/in-process.js';

const local = useLocalServer();

describe('a mistyped command', () => {
  it.each([
    [['staus'], "unknown command 'staus'", "Did you mean 'svc status'?", "See 'svc --help'."],
    [['keys', 'lst'], "unknown command 'lst'", "Did you mean 'svc keys list'?", "See 'svc keys --help'."],
    [['key', 'list'], "unknown command 'key'", "Did you mean 'svc keys list'?", "See 'svc --help'."],
  ])('svc %j suggests the command it was near, exit 2', async (args, unknown, suggestion, help) => {
    const result = await svc(args, local.env);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`error: ${unknown}\n${suggestion}\n${help}`);
  });

  it('suggests nothing for a word near no command', async () => {
    const result = await svc(['frobnicate'], local.env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe("error: unknown command 'frobnicate'\nSee 'svc --help'.");
  });
});

describe('help of a subcommand', () => {
  it('lists the global options it inherits, as its own example uses --json', async () => {
    const result = await svc(['keys', 'list', '--help'], {});
    expect(result.exitCode).toBe(0);
    const inherited = result.stdout.slice(result.stdout.indexOf('Global Options:'));
    for (const flag of ['--json', '--quiet', '--no-input', '--base-url <url>', '--profile <name>', '--timeout <ms>', '--no-wait', '--max-wait <seconds>', '--verbose']) {
      expect(inherited).toContain(flag);
    }
    expect(result.stdout).toContain('$ svc keys list --json');
  });

  it('says no "(default: [])" for a repeatable field', async () => {
    const result = await svc(['api', '--help'], {});
    expect(result.stdout).not.toContain('(default: [])');
    expect(result.stdout).toContain('(repeatable)');
  });
});
