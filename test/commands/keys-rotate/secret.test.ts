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

const lost: [string, Variation['created']][] = [
  ['nested two objects down', (_r, secret) => ({ result: { key: { value: secret } } })],
  ['in a format svc does not know', (r, secret) => ({ ...r, token: `live-${secret.slice(3)}` })],
  ['twice, with two different values', (r, secret) => ({ ...r, key: secret, previous: `sk_${'A'.repeat(64)}` })],
];

describe('keys rotate', () => {
  it('shows the new secret found under another name, then revokes the old key', async () => {
    const env = await against({ created: (r, secret) => ({ data: { ...r, api_key: secret } }) });
    const old = (await svc(['keys', 'create', 'app'], env)).stdout;
    const oldId = [...spec.server.keys.values()].find((k) => k.secret === old)!.id;
    const result = await svc(['keys', 'rotate', '--yes', oldId], env);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(newest(spec.server).secret);
    expect(spec.server.keys.has(oldId)).toBe(false);
  });

  it.each(lost)('leaves the old key alone when the new secret is %s', async (_, created) => {
    const env = await against({ created });
    const oldKey = newest(spec.server);
    const result = await svc(['keys', 'rotate', '--yes', oldKey.id], env);
    const fresh = newest(spec.server);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toContain(fresh.secret.slice(3));
    expect(result.stderr).toContain(`The old key ${oldKey.id} was left as it was`);
    expect(spec.server.keys.get(oldKey.id)?.enabled).toBe(true);
    expect(spec.server.seen.filter((r) => r.startsWith('DELETE') || r.startsWith('PATCH'))).toEqual([]);
  });

  it('--json prints the new key even when the old one cannot be revoked', async () => {
    const env = await against({});
    const oldKey = newest(spec.server);
    spec.server.rules.push({ method: 'DELETE', times: 1, then: { status: 400, body: '{"error":"no"}' }, work: false });
    const result = await svc(['keys', 'rotate', '--yes', oldKey.id, '--json'], env);
    expect(result.exitCode).toBe(1);
    const doc = JSON.parse(result.stdout);
    expect(doc.key.secret).toBe(newest(spec.server).secret);
    expect(doc.previous).toBeNull();
    expect(spec.server.keys.has(oldKey.id)).toBe(true);
  });
});
