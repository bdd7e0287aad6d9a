// tier: in-process
/**
 * --query EXPRESSION (issue 46): a JMESPath expression applied where every
 * document is printed (the renderer's json()), so that a script needs no
 * jq. Strings come out raw, anything else as JSON; it implies --json; a bad
 * expression is a usage error before anything is done; a failure's
 * document is never queried.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../../helpers/in-process.js';

const local = useLocalServer({ plan: 'pro' });

async function keyCount(): Promise<number> {
  return Number((await svc(['keys', 'list', '--query', 'length(keys)'], local.env)).stdout);
}

describe('--query', () => {
  it('prints a string raw, anything else as JSON, on every command that prints a document', async () => {
    const made = await svc(['keys', 'create', 'query-raw', '--to-file', join(local.configDir, 'query-raw.env'), '--query', 'key.id'], local.env);
    expect(made.exitCode, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/^[a-z0-9_]+$/);
    const id = made.stdout;
    const cases: [string[], string][] = [
      [['keys', 'view', id, '--query', 'name'], 'query-raw'],
      [['keys', 'view', id, '--query', 'enabled'], 'true'],
      [['keys', 'view', id, '--query', '[name, status]'], JSON.stringify(['query-raw', 'enabled'], null, 2)],
      [['keys', 'list', '--query', "keys[?name=='query-raw'].id"], JSON.stringify([id], null, 2)],
      [['keys', 'list', '--query', "keys[?name=='query-raw'] | [0].hint"], JSON.parse((await svc(['keys', 'view', id, '--json'], local.env)).stdout).hint],
      [['keys', 'list', '--query', 'no_such_field'], 'null'],
      [['keys', 'disable', id, '--query', 'changed[0].status'], 'disabled'],
      [['status', '--query', 'profile'], 'default'],
    ];
    for (const [args, expected] of cases) {
      const result = await svc(args, local.env);
      expect({ args, exitCode: result.exitCode, stdout: result.stdout }).toEqual({ args, exitCode: 0, stdout: expected });
    }
  });

  it('implies --json: the secret of a new key is its document\'s field, and a join of names is lines a shell reads', async () => {
    const made = await svc(['keys', 'create', 'query-secret', '--query', 'key.secret'], local.env);
    expect(made.stdout).toMatch(/^sk_[A-Za-z0-9]{64}$/);
    const names = await svc(['keys', 'list', '--query', 'join(`"\\n"`, keys[?starts_with(name, `"query-"`)].name)'], local.env);
    expect(names.stdout.split('\n').sort()).toEqual(expect.arrayContaining(['query-raw', 'query-secret']));
  });

  it("shows a string's control characters as escapes, but keeps its tabs and newlines", async () => {
    const result = await svc(['keys', 'list', '--query', '`"a\\tb\\nc\\u001b[31md\\u202ee"`'], local.env);
    expect(result.stdout).toBe('a\tb\nc\\x1b[31md\\u202ee');
  });

  it('refuses an expression it cannot parse, or a function it does not have, before anything is done (exit 2)', async () => {
    const before = await keyCount();
    for (const expression of ['keys[?', '', 'nope(@)', 'length(@, @)', 'keys[0].\u001b[31m']) {
      const result = await svc(['keys', 'create', 'never-made', '--query', expression], local.env);
      expect({ expression, exitCode: result.exitCode }).toEqual({ expression, exitCode: 2 });
      // The failure document, whole: the expression is not applied to it.
      const document = JSON.parse(result.stdout) as { error: { message: string; exitCode: number } };
      expect(document.error.exitCode).toBe(2);
      expect(result.stderr).toContain('--query');
      expect(result.stderr).not.toContain('\u001b');
    }
    expect(await keyCount()).toBe(before);
  });

  it('prints the document whole when the expression fails on it, and exits 2 once the command has done its work', async () => {
    const before = await keyCount();
    const result = await svc(['keys', 'create', 'query-fails', '--query', 'abs(name)'], local.env);
    expect(result.exitCode).toBe(2);
    // Nothing the command made is lost: the new key's secret is in the document printed instead.
    expect((JSON.parse(result.stdout) as { key: { secret: string } }).key.secret).toMatch(/^sk_/);
    expect(result.stderr).toContain("--query 'abs(name)' could not be applied to the document");
    expect(await keyCount()).toBe(before + 1);
  });

  it.each([
    ['keys create', ['keys', 'create', 'query-drops']],
    ['svc api POST', ['api', '/user/api-keys', '-X', 'POST', '-f', 'name=query-drops']],
  ])("never leaves out a new key's secret: %s --query of its id alone prints the document whole, and exits 2 once done", async (_, args) => {
    const result = await svc([...args, '--query', args[0] === 'api' ? 'id' : 'key.id'], local.env);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toMatch(/"sk_[A-Za-z0-9]{64}"/);
    expect(result.stderr).toContain("leaves out the new key's secret");
  });

  it("leaves a failure's document whole, whatever the expression", async () => {
    const result = await svc(['keys', 'view', 'no-such-key', '--query', 'id'], local.env);
    expect(result.exitCode).toBe(4);
    expect((JSON.parse(result.stdout) as { error: { exitCode: number } }).error.exitCode).toBe(4);
  });

  it('applies to svc api too; its failure, the server\'s answer inside, is the failure document whole', async () => {
    const ok = await svc(['api', '/workspace', '--query', 'plan'], local.env);
    expect(ok).toMatchObject({ exitCode: 0, stdout: 'pro' });
    const missing = await svc(['api', '/user/api-keys/no-such-key', '--query', 'id'], local.env);
    expect(missing.exitCode).toBe(4);
    expect((JSON.parse(missing.stdout) as { error: { exitCode: number; body: unknown } }).error).toMatchObject({ exitCode: 4, body: { code: expect.any(String) } });
  });
});
