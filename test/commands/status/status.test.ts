// tier: in-process
import { Ajv2020 } from 'ajv/dist/2020.js';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call, svc, useLocalServer } from '../../helpers/in-process.js';

/** status's `error` is a failed command's `--json` document's `error` member, by the same schema. */
const validFailure = new Ajv2020({ strict: true }).compile(JSON.parse(readFileSync(resolve(import.meta.dirname, '../../../docs/cli-error.schema.json'), 'utf8')));
const expectFailureShape = (error: unknown) => expect(validFailure({ error }), JSON.stringify(validFailure.errors)).toBe(true);

const local = useLocalServer({ plan: 'free' });
const UNKNOWN_KEY = `sk_${'a'.repeat(64)}`;
/** Nothing listens on port 9 (discard) on a test machine: the connection is refused at once. */
const DOWN = 'http://127.0.0.1:9';

const status = (env: Record<string, string | undefined>, json = false) => svc(['status', ...(json ? ['--json'] : [])], { ...local.env, ...env });

/** The block's lines by label: 'Key' → 'sk_… (from SVC_API_KEY)  ✓ valid'. */
function block(stdout: string): Record<string, string> {
  return Object.fromEntries(stdout.trimEnd().split('\n').map((line) => [line.slice(0, 12).replace(/:\s*$/, ''), line.slice(12)]));
}

describe('svc status prints its block in every state', () => {
  it('a working key: every line, exit 0', async () => {
    const text = await status({});
    expect(text.exitCode, text.stderr).toBe(0);
    const lines = block(text.stdout);
    expect(Object.keys(lines)).toEqual(['Profile', 'Server', 'Key', 'Workspace', 'Plan', 'Rate limit', 'Latency']);
    expect(lines.Key).toMatch(/^sk_\w{4}…\w{4} \(from SVC_API_KEY\)  ✓ valid$/);
    expect(lines.Plan).toBe('free, 30 requests/minute');
    expect(lines['Rate limit']).toMatch(/^\d+ of 30 requests left this minute/);

    const json = await status({}, true);
    expect(json.exitCode).toBe(0);
    const doc = JSON.parse(json.stdout);
    expect(doc).toMatchObject({ profile: 'default', baseUrl: local.server.url, baseUrlSource: 'env', key: { source: 'env', valid: true }, error: null });
    expect(doc.workspace.plan).toBe('free');
    expect(doc.rateLimit).toMatchObject({ limit: 30, limited: false });
  });

  it('a rejected key: the block with ✗ on the key, the 401 message on stderr without the key and server again, exit 3', async () => {
    const text = await status({ SVC_API_KEY: UNKNOWN_KEY });
    expect(text.exitCode).toBe(3);
    expect(block(text.stdout)).toEqual({
      Profile: 'default',
      Server: `${local.server.url} (from SVC_BASE_URL)`,
      Key: 'sk_aaaa…aaaa (from SVC_API_KEY)  ✗ rejected (401)',
    });
    expect(text.stderr).toContain('Authentication failed (401)');
    expect(text.stderr).toContain('The key is unknown, disabled, expired or revoked.');
    expect(text.stderr).toContain('Next: put a working key in SVC_API_KEY');
    // Issue 39, 4: each thing said once, the key and server in the block only.
    expect(text.stderr).not.toMatch(/key: {4}sk_|server: /);

    const json = await status({ SVC_API_KEY: UNKNOWN_KEY }, true);
    expect(json.exitCode).toBe(3);
    const doc = JSON.parse(json.stdout);
    expect(doc.key).toEqual({ hint: 'sk_aaaa…aaaa', source: 'env', store: 'env', valid: false });
    expect(doc.error).toMatchObject({ exitCode: 3, status: 401, code: 'UNAUTHORIZED' });
    expect(doc.error.message).toContain('unknown, disabled, expired or revoked');
    expectFailureShape(doc.error);
  });

  it('a server that is down: one attempt, ✗ on the server with its address, exit 1', async () => {
    const text = await status({ SVC_BASE_URL: DOWN });
    expect(text.exitCode).toBe(1);
    expect(block(text.stdout)).toEqual({
      Profile: 'default',
      Server: `${DOWN} (from SVC_BASE_URL)  ✗ no answer: connection refused`,
      Key: `${block((await status({})).stdout).Key!.split('  ')[0]}  not checked`,
    });
    // The block said it: stderr adds only what to do (issue 39, 4).
    expect(text.stderr).not.toContain('Could not get an answer');
    expect(text.stderr).toContain('Is the server running?');
    expect(text.stderr).not.toContain('retrying');
    // Every retry sleeps first (the fake sleep records it): none means one attempt.
    expect(text.slept).toEqual([]);

    const json = await status({ SVC_BASE_URL: DOWN }, true);
    expect(json.exitCode).toBe(1);
    const doc = JSON.parse(json.stdout);
    expect(doc.key.valid).toBeNull();
    expect(doc.error).toMatchObject({ exitCode: 1 });
    expect(doc.error).not.toHaveProperty('status');
    expect(doc.error.message).toContain('connection refused');
    expectFailureShape(doc.error);
  });

  it('no key: the block says so, exit 3', async () => {
    const text = await status({ SVC_API_KEY: undefined });
    expect(text.exitCode).toBe(3);
    expect(block(text.stdout).Key).toBe("✗ Not logged in: no API key for profile 'default'");
    expect(text.stderr).not.toContain('Not logged in');
    expect(text.stderr).toBe('error: Run `svc login` to save a key, or set SVC_API_KEY.');
    const json = await status({ SVC_API_KEY: undefined }, true);
    expect(json.exitCode).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({ key: null, workspace: null, error: { exitCode: 3 } });
    expectFailureShape(JSON.parse(json.stdout).error);
  });

  it('a spent rate limit: says how many are left and when it resets, without waiting, exit 0', async () => {
    const key = local.server.apiKey!;
    while ((await call(local.server.url, 'GET', '/api/service/workspace', key)).status !== 429);
    const text = await status({});
    expect(text.slept).toEqual([]);
    expect(text.exitCode, text.stderr).toBe(0);
    const lines = block(text.stdout);
    expect(lines.Key).toContain('✓ valid');
    expect(lines.Workspace).toBe('not read: rate limited');
    expect(lines['Rate limit']).toMatch(/^✗ 0 of 30 requests left this minute \(resets in \d+ s\)$/);
    expect(text.stderr).not.toContain('retrying');

    const json = await status({}, true);
    expect(json.exitCode).toBe(0);
    const doc = JSON.parse(json.stdout);
    expect(doc.rateLimit).toMatchObject({ limit: 30, remaining: 0, limited: true });
    expect(doc.rateLimit.resetSeconds).toBeGreaterThan(0);
    expect(doc.error).toBeNull();
  });
});
