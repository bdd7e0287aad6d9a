// tier: in-process
import { describe, expect, it } from 'vitest';
import type { Deps } from '../../../src/cli/terminal/deps.js';
import { call, svc, useLocalServer } from '../../helpers/in-process.js';

// docs/contract.md §C4: Ctrl-C while a create's request is out. The answer
// holds the only copy of a secret, so the first Ctrl-C waits for it; a
// second stops at once, saying what may have been made.

const local = useLocalServer({ plan: 'pro' });

/** Signals as a person sends them while svc sleeps: a Ctrl-C as its first sleep begins (a rate-limit wait), a sleep that never ends by itself. */
function ctrlCInWait(): Pick<Deps, 'onSignal' | 'sleep'> {
  const listeners = new Set<(signal: NodeJS.Signals) => void>();
  return {
    onSignal(_signals, listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    sleep: () => {
      for (const listener of [...listeners]) listener('SIGINT');
      return new Promise<void>(() => {});
    },
  };
}

const refuseCreate = (rule: Record<string, unknown> = {}) =>
  call(local.server.url, 'POST', '/_local/faults', local.server.adminToken, {
    rules: [{ method: 'POST', path: '/user/api-keys', times: 1, then: 'status', status: 429, code: 'RATE_LIMITED', retryAfter: '5', ...rule }],
  });

const named = async (name: string) => JSON.parse((await svc(['keys', 'list', '--json', '--name', name], local.env)).stdout).keys as { id: string }[];

describe('Ctrl-C before svc api POST was tried again', () => {
  it('during the rate-limit wait after a 429: nothing was changed, and svc says so, exit 130', async () => {
    await refuseCreate();
    const result = await svc(['api', '/user/api-keys', '-F', 'name=early-api'], local.env, { deps: ctrlCInWait() });
    expect(result.exitCode).toBe(130);
    expect(result.stdout).toBe('');
    expect(result.stderr.replace(/\s+/g, ' ')).toContain(
      'Stopped before POST /user/api-keys was tried again: the server refused it for the rate limit (429), so nothing was changed.',
    );
    expect(result.stderr).not.toContain('only copy');
    expect(await named('early-api')).toHaveLength(0);
  });
});
