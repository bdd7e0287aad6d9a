// tier: in-process
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { call, svc, useLocalServer, windowEndsIn } from '../../helpers/in-process.js';
import { startSpecServer } from '../../helpers/spec-server.js';

const validFailure = new Ajv2020({ strict: true }).compile(JSON.parse(readFileSync(resolve(import.meta.dirname, '../../../docs/cli-error.schema.json'), 'utf8')));

const local = useLocalServer();

describe('svc api', () => {
  it('GETs a path and prints the JSON answer', async () => {
    const result = await svc(['api', '/workspace'], local.env);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ id: local.server.workspaceId, name: expect.any(String), plan: 'free', requestsPerMinute: 30 });
  });

  it('accepts the path with or without the /api/service prefix', async () => {
    const result = await svc(['api', 'api/service/workspace'], local.env);
    expect(JSON.parse(result.stdout).id).toBe(local.server.workspaceId);
  });

  it('POSTs typed fields and PATCHes with -X', async () => {
    const created = await svc(['api', '/user/api-keys', '-f', 'name=via-api', '-F', 'expiresAt=null'], local.env);
    expect(created.exitCode).toBe(0);
    const key = JSON.parse(created.stdout);
    expect(key).toMatchObject({ name: 'via-api', expiresAt: null, secret: expect.stringMatching(/^sk_/) });
    const patched = await svc(['api', '-X', 'PATCH', `/user/api-keys/${key.id}`, '-F', 'enabled=false'], local.env);
    expect(JSON.parse(patched.stdout)).toMatchObject({ id: key.id, enabled: false });
    const again = await svc(['api', '-X', 'PATCH', `/user/api-keys/${key.id}`, '-F', 'enabled=false', '--include'], local.env);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toBe('');
    expect(again.stderr).toContain('HTTP 204');
  });

  it('reads the body from stdin with --input -', async () => {
    const result = await svc(['api', '/user/api-keys', '--input', '-'], local.env, { input: '{"name":"from-stdin"}' });
    expect(JSON.parse(result.stdout).name).toBe('from-stdin');
    const broken = await svc(['api', '/user/api-keys', '--input', '-'], local.env, { input: '{nope' });
    expect(broken.exitCode).toBe(2);
  });

  it('reads a body typed on a terminal once it has said so, --quiet or not; unattended it reads none (exit 2)', async () => {
    const typed = await svc(['api', '/user/api-keys', '--input', '-', '--quiet'], local.env, { input: '{"name":"typed-in"}', tty: true });
    expect(typed.exitCode, typed.stderr).toBe(0);
    // Wrapped at the terminal's width.
    expect(typed.stderr.replace(/\n */g, ' ')).toContain('Reading from the terminal: type the text, then press Ctrl-D on a line of its own (Ctrl-C cancels).');
    expect(JSON.parse(typed.stdout).name).toBe('typed-in');
    const unattended: [string[], Record<string, string>, string][] = [
      [['--no-input'], {}, '--no-input'],
      [[], { CI: 'true' }, 'CI set'],
    ];
    for (const [flags, env, why] of unattended) {
      const refused = await svc(['api', '/user/api-keys', '--input', '-', ...flags], { ...local.env, ...env }, { input: '{"name":"never-typed"}', tty: true });
      expect(refused.exitCode).toBe(2);
      expect(refused.stderr.replace(/\n */g, ' ')).toContain(`stdin is a terminal, and with ${why} svc waits for no one to type. Pipe the text in, or name a file.`);
      expect(refused.stderr).not.toContain('Ctrl-D');
    }
    const list = await svc(['api', '/user/api-keys'], local.env);
    expect(JSON.parse(list.stdout).keys.map((k: { name: string }) => k.name)).not.toContain('never-typed');
  });

  it('prints the error document and exits 4 on 404, 1 on 405, 2 on 400', async () => {
    const missing = await svc(['api', '/no/such/path'], local.env);
    expect(missing.exitCode).toBe(4);
    expect(JSON.parse(missing.stdout)).toMatchObject({ code: 'NOT_FOUND' });
    const wrongMethod = await svc(['api', '-X', 'PUT', '/workspace'], local.env);
    expect(wrongMethod.exitCode).toBe(1);
    expect(JSON.parse(wrongMethod.stdout)).toMatchObject({ code: 'METHOD_NOT_ALLOWED' });
    const badBody = await svc(['api', '/user/api-keys', '-F', 'name=3'], local.env);
    expect(badBody.exitCode).toBe(2);
    expect(JSON.parse(badBody.stdout)).toMatchObject({ code: 'INVALID_REQUEST' });
  });

  it("--json: a failure is svc's failure document, the server's answer inside it (`body`), as a script reads it", async () => {
    const spec = await startSpecServer();
    // A service's own error shape, not the contract's: `error` an object. Without --json it is printed as it came, as gh api prints it.
    const said = { error: { message: 'quota used up', code: 'QUOTA' }, requestId: 'r-1' };
    spec.rules.push({ method: 'GET', times: 2, work: false, then: { status: 409, body: JSON.stringify(said) } });
    try {
      const env = { ...local.env, SVC_BASE_URL: spec.url, SVC_API_KEY: spec.apiKey };
      const plain = await svc(['api', '/workspace'], env);
      expect(plain.exitCode).toBe(1);
      expect(JSON.parse(plain.stdout)).toEqual(said);
      const json = await svc(['api', '/workspace', '--json'], env);
      expect(json.exitCode).toBe(1);
      const document: unknown = JSON.parse(json.stdout);
      expect(validFailure(document), JSON.stringify(validFailure.errors)).toBe(true);
      expect(document).toEqual({ error: { message: 'GET /workspace failed (409 QUOTA): quota used up', exitCode: 1, status: 409, code: 'QUOTA', body: said } });
    } finally {
      await spec.close();
    }
  });

  it('--json: each failure of the reference server is the failure document, its exit code the process\'s', async () => {
    for (const [args, exitCode] of [
      [['/no/such/path'], 4],
      [['-X', 'PUT', '/workspace'], 1],
      [['/user/api-keys', '-F', 'name=3'], 2],
    ] as const) {
      const result = await svc(['api', ...args, '--json'], local.env);
      const document = JSON.parse(result.stdout);
      expect(validFailure(document), JSON.stringify(validFailure.errors)).toBe(true);
      expect(result.exitCode).toBe(exitCode);
      expect(document.error).toMatchObject({ exitCode, message: expect.any(String), body: { error: expect.any(String), code: document.error.code } });
    }
  });

  it('stops on 401 with the operator message', async () => {
    const result = await svc(['api', '/workspace'], { ...local.env, SVC_API_KEY: `sk_${'x'.repeat(64)}` });
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('unknown, disabled, expired or revoked');
  });

  it('honours the rate-limit policy: exit 5 with --no-wait', async () => {
    await windowEndsIn(local.server, 40);
    for (;;) {
      if ((await call(local.server.url, 'GET', '/api/service/workspace', local.server.apiKey!)).status === 429) break;
    }
    const result = await svc(['api', '/workspace', '--no-wait'], local.env);
    expect(result.exitCode).toBe(5);
    await call(local.server.url, 'POST', '/_local/clock', local.server.adminToken, { advanceSeconds: 60 });
  });

  it('refuses a full URL: the server comes from --base-url', async () => {
    const result = await svc(['api', 'http://elsewhere.test/api/service/workspace'], local.env);
    expect(result.exitCode).toBe(2);
  });

  it('refuses a path that climbs out of /api/service, plain or percent-encoded, before any request', async () => {
    for (const path of ['/user/../../_local/clock', '/user/%2e%2e/%2E%2E/_local/clock', '/./workspace', '../workspace']) {
      const result = await svc(['api', path], local.env);
      expect(result.exitCode, path).toBe(2);
      expect(result.stderr).toContain('svc api sends the key only below /api/service');
    }
  });

  it('names a file given with -F @file or --input that cannot be read (exit 2)', async () => {
    const field = await svc(['api', '/user/api-keys', '-F', 'expiresAt=@/nonexistent/file'], local.env);
    expect(field.exitCode).toBe(2);
    expect(field.stderr).toContain('-F names /nonexistent/file, which cannot be read: there is no such file.');
    const input = await svc(['api', '/user/api-keys', '--input', '/nonexistent/body.json'], local.env);
    expect(input.exitCode).toBe(2);
    expect(input.stderr).toContain('--input names /nonexistent/body.json, which cannot be read');
  });
});
