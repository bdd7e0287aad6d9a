// tier: in-process
import { describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../../helpers/in-process.js';

const local = useLocalServer();

describe('svc api', () => {
  it('warns that a new key\'s secret in the answer is shown only this once', async () => {
    const created = await svc(['api', '/user/api-keys', '-f', 'name=by-api'], local.env);
    expect(created.exitCode, created.stderr).toBe(0);
    const doc = JSON.parse(created.stdout);
    expect(doc.secret).toMatch(/^sk_/);
    expect(created.stderr).toContain('This is the only time this secret is shown');
    expect(created.stderr).toContain(`svc keys revoke ${doc.id}`);
    const listed = await svc(['api', '/user/api-keys'], local.env);
    expect(listed.stderr).toBe('');
  });
});
