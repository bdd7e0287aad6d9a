// tier: in-process
import { describe, expect, it } from 'vitest';
import { svc } from '../../helpers/in-process.js';
import { useCommandTest } from '../../helpers/command-test.js';

const local = useCommandTest({ plan: 'pro' });

describe('on a terminal', () => {
  it('keys ping says how the key is doing; --json says it as a document, --quiet not at all', async () => {
    const text = await svc(['keys', 'ping'], local.env);
    expect(text.stdout).toMatch(/^Key sk_\S+ works: 200 from http:\/\/127\.0\.0\.1:\d+ in \d+ ms; \d+ of 1000 requests left/);
    const json = JSON.parse((await svc(['keys', 'ping', '--json'], local.env)).stdout);
    expect(json).toMatchObject({ ok: true, status: 200, baseUrl: local.server.url, key: { source: 'env' } });
    expect(await svc(['keys', 'ping', '--quiet'], local.env)).toMatchObject({ exitCode: 0, stdout: '' });
  });
});
