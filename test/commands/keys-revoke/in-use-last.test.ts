// tier: in-process
/**
 * The key svc is using, revoked among others, goes last: revoked first, it
 * would answer 401 to every revoke after it.
 */
import { describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../../helpers/in-process.js';
import { scriptedPrompter } from '../../helpers/prompter.js';

const local = useLocalServer({ plan: 'pro' });

describe('keys revoke of the key in use among others, on a terminal', () => {
  it('revokes the others first, then the key in use, and says which way round', async () => {
    const made = JSON.parse((await svc(['keys', 'create', 'spare-key', '--json'], local.env)).stdout).key as { id: string; secret: string };
    const other = JSON.parse((await svc(['keys', 'create', 'other-key', '--json'], local.env)).stdout).key as { id: string };
    const env = { ...local.env, SVC_API_KEY: made.secret };
    const prompter = scriptedPrompter([{ confirm: true }]);
    const result = await svc(['keys', 'revoke', 'spare-key', 'other-key'], env, { tty: true, columns: 120, deps: { prompter } });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr.replace(/\s+/g, ' ')).toContain(`One of these is the key svc is using (${made.secret.slice(0, 7)}\u2026${made.secret.slice(-4)}): revoking it locks the session out until SVC_API_KEY holds another key.`);
    const told = [...result.stderr.matchAll(/Revoked '([\w-]+)'/g)].map((m) => m[1]);
    expect(told).toEqual(['other-key', 'spare-key']);
    const left = JSON.parse((await svc(['keys', 'list', '--json'], local.env)).stdout).keys.map((k: { id: string }) => k.id);
    expect(left).not.toContain(made.id);
    expect(left).not.toContain(other.id);
  });
});
