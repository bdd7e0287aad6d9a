// tier: process
/**
 * The look for a lost create's key (docs/contract.md §C4) in the built svc,
 * on the real clock: the waits between looks are slept, the change a
 * gateway's 504 left behind lands during them, and a signal while svc
 * waits ends the look at once with what it found.
 */
import { describe, expect, it } from 'vitest';
import { call, svc, useLocalServer } from '../helpers/cli.js';

const local = useLocalServer(['--plan', 'pro', '--admin-token', 'local-admin']);
const fault = (rule: Record<string, unknown>) => call(local.server.url, 'POST', '/_local/faults', 'local-admin', { rules: [rule] });
const named = async (name: string) =>
  (JSON.parse((await svc(['keys', 'list', '--json', '--name', name], local.env)).stdout).keys as { id: string; name: string }[]).filter((k) => k.name === name);

describe('a create behind a gateway that answered 504', () => {
  it('the change lands 1.5 s later: svc, looking again after 1 s and 2 s, finds the key by its mark and revokes it', async () => {
    await fault({ method: 'POST', path: '/user/api-keys', status: 504, body: 'html', landsAfterMs: 1_500 });
    const result = await svc(['keys', 'create', 'real-clock-late', '--expires-in', '1h', '--json'], local.env);
    expect(result.exitCode).toBe(1);
    const { orphans } = JSON.parse(result.stdout).error;
    expect(orphans).toEqual([expect.objectContaining({ name: 'real-clock-late', revoked: true })]);
    expect(result.stderr).toMatch(/The create's answer was lost, so its outcome is unknown: svc looks for the key it may have made for up to 6\d s more, until it must have settled; what failed follows\./);
    expect(await named('real-clock-late')).toEqual([]);
  });
});

describe('a signal while svc waits to look again', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('%s ends the look there: svc says what it found and how long it looked, and ends by the signal', async (signal) => {
    await fault({ method: 'POST', path: '/user/api-keys', status: 502 });
    const child = svc(['keys', 'create', `waiting-${signal}`], local.env);
    // The first wait between looks says so in a log: svc is then sleeping.
    await new Promise<void>((resolve) => {
      let stderr = '';
      child.stderr!.on('data', (chunk) => {
        stderr += String(chunk);
        if (stderr.includes("so its outcome is unknown")) resolve();
      });
    });
    child.kill(signal);
    const result = await child;
    expect(result.signal, result.stderr).toBe(signal);
    expect(result.stderr).toContain(`No key named 'waiting-${signal}' made since the request began is in the list yet`);
    expect(result.stderr).toContain('svc looked once, then stopped as asked, before the create must have settled.');
  });
});
