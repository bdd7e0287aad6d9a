// tier: in-process
import { describe, expect, it } from 'vitest';
import type { Deps } from '../../../src/cli/terminal/deps.js';
import { call, svc, useLocalServer } from '../../helpers/in-process.js';

// docs/contract.md §C4: Ctrl-C while a create's request is out. The answer
// holds the only copy of a secret, so the first Ctrl-C waits for it; a
// second stops at once, saying what may have been made.

const local = useLocalServer({ plan: 'pro' });

/** Signals as a person sends them: `count` Ctrl-Cs, each as soon as svc listens (the create's request is then out, held by a delay fault). */
function ctrlC(count: number, signal: NodeJS.Signals = 'SIGINT'): Pick<Deps, 'onSignal'> {
  return {
    onSignal(_signals, listener) {
      let live = true;
      for (let i = 0; i < count; i++) setImmediate(() => live && listener(signal));
      return () => {
        live = false;
      };
    },
  };
}

/** One Ctrl-C, sent when svc starts listening for the `nth` time (counting from 1). */
function ctrlCAt(nth: number, signal: NodeJS.Signals = 'SIGINT'): Pick<Deps, 'onSignal'> {
  let listened = 0;
  return {
    onSignal(_signals, listener) {
      let live = true;
      if (++listened === nth) setImmediate(() => live && listener(signal));
      return () => {
        live = false;
      };
    },
  };
}

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

const holdCreate = () =>
  call(local.server.url, 'POST', '/_local/faults', local.server.adminToken, { rules: [{ method: 'POST', path: '/user/api-keys', delayMs: 400 }] });

const named = async (name: string) => JSON.parse((await svc(['keys', 'list', '--json', '--name', name], local.env)).stdout).keys as { id: string }[];

describe('Ctrl-C while a create is out', () => {
  it('once: svc says it waits for the answer, prints the secret, then exits 130', async () => {
    await holdCreate();
    const result = await svc(['keys', 'create', 'held'], local.env, { deps: ctrlC(1) });
    expect(result.exitCode).toBe(130);
    expect(result.stdout).toMatch(/^sk_[A-Za-z0-9]{64}$/);
    expect(result.stderr).toContain('Interrupted while the create was out: waiting for its answer');
    expect(result.stderr).toContain('Stopped after the new key was made (shown above)');
    expect(await named('held')).toHaveLength(1);
  });

  it('twice: svc stops at once, naming the key that may have been made and how to find it', async () => {
    await holdCreate();
    const result = await svc(['keys', 'create', 'given up'], local.env, { deps: ctrlC(2) });
    expect(result.exitCode).toBe(130);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("a key named 'given up' may have been made, and nobody has seen its secret");
    expect(result.stderr).toContain("svc keys list --name 'given up'");
  });

  it('during a rotation: the new key is shown and the old one left as it was', async () => {
    const old = JSON.parse((await svc(['keys', 'create', 'turning', '--json'], local.env)).stdout).key as { id: string };
    await holdCreate();
    const result = await svc(['keys', 'rotate', '--yes', old.id], local.env, { deps: ctrlC(1) });
    expect(result.exitCode).toBe(130);
    expect(result.stdout).toMatch(/^sk_[A-Za-z0-9]{64}$/);
    expect((await named('turning')).map((k) => k.id)).toContain(old.id);
    expect(await named('turning')).toHaveLength(2);
  });

  it("during the rotation's revoke: stops at once, saying the old key may or may not be revoked", async () => {
    const old = JSON.parse((await svc(['keys', 'create', 'halfway', '--json'], local.env)).stdout).key as { id: string };
    await call(local.server.url, 'POST', '/_local/faults', local.server.adminToken, { rules: [{ method: 'DELETE', path: '/user/api-keys/*', delayMs: 400 }] });
    // The first listener is the create's; the second, the revoke's.
    const result = await svc(['keys', 'rotate', '--yes', old.id], local.env, { deps: ctrlCAt(2) });
    expect(result.exitCode).toBe(130);
    expect(result.stdout).toMatch(/^sk_[A-Za-z0-9]{64}$/);
    expect(result.stderr.replace(/\n  /g, ' ')).toContain(`Stopped while the old key ${old.id} was being revoked: it may or may not be`);
    expect(result.stderr).toContain(`svc keys view ${old.id}`);
  });
});

describe('Ctrl-C before a create was made', () => {
  const nothingMade = "Stopped before the create was tried again: the server refused it for the rate limit (429), so no key named 'early' was made.";

  it.each([false, true])('during the rate-limit wait after a 429 (terminal: %s): no key was made, and svc says so, exit 130', async (tty) => {
    await refuseCreate();
    const result = await svc(['keys', 'create', 'early'], local.env, { tty, deps: ctrlCInWait() });
    expect(result.exitCode).toBe(130);
    expect(result.stdout).toBe('');
    expect(result.stderr.replace(/\s+/g, ' ')).toContain(nothingMade);
    expect(result.stderr).not.toContain('only copy');
    expect(result.stderr).not.toContain('may have been made');
    expect(await named('early')).toHaveLength(0);
  });

  it('while the attempt the server then refused was out: svc waits for that answer, then stops at the 429 without trying again', async () => {
    await refuseCreate({ delayMs: 400 });
    const result = await svc(['keys', 'create', 'early'], local.env, { deps: ctrlC(1) });
    expect(result.exitCode).toBe(130);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('Interrupted while the create was out: waiting for its answer');
    expect(result.stderr.replace(/\s+/g, ' ')).toContain(nothingMade);
    expect(result.slept).toEqual([]);
    expect(await named('early')).toHaveLength(0);
  });
});

// A cancelled CI job sends SIGTERM: its exit code is 128 + 15 on each path a Ctrl-C takes, never Ctrl-C's 130.
describe('SIGTERM while a create is out: 143, as for SIGTERM anywhere', () => {
  it('once: the secret is printed, then 143', async () => {
    await holdCreate();
    const result = await svc(['keys', 'create', 'held-term'], local.env, { deps: ctrlC(1, 'SIGTERM') });
    expect(result.exitCode).toBe(143);
    expect(result.stdout).toMatch(/^sk_[A-Za-z0-9]{64}$/);
  });

  it('SIGHUP (a closed terminal) is waited through the same way, then 129: the answer is never dropped unseen', async () => {
    await holdCreate();
    const result = await svc(['keys', 'create', 'held-hup'], local.env, { deps: ctrlC(1, 'SIGHUP') });
    expect(result.exitCode).toBe(129);
    expect(result.stdout).toMatch(/^sk_[A-Za-z0-9]{64}$/);
  });

  it('twice: stops at once, 143', async () => {
    await holdCreate();
    const result = await svc(['keys', 'create', 'given-up-term'], local.env, { deps: ctrlC(2, 'SIGTERM') });
    expect(result.exitCode).toBe(143);
    expect(result.stderr).toContain("a key named 'given-up-term' may have been made");
  });

  it("during the rotation's revoke: 143", async () => {
    const old = JSON.parse((await svc(['keys', 'create', 'halfway-term', '--json'], local.env)).stdout).key as { id: string };
    await call(local.server.url, 'POST', '/_local/faults', local.server.adminToken, { rules: [{ method: 'DELETE', path: '/user/api-keys/*', delayMs: 400 }] });
    const result = await svc(['keys', 'rotate', '--yes', old.id], local.env, { deps: ctrlCAt(2, 'SIGTERM') });
    expect(result.exitCode).toBe(143);
    expect(result.stderr.replace(/\n  /g, ' ')).toContain(`Stopped while the old key ${old.id} was being revoked`);
  });

  it('svc api POST: once 143 after the answer, twice 143 at once', async () => {
    for (const count of [1, 2]) {
      await holdCreate();
      const result = await svc(['api', '/user/api-keys', '-f', `name=api-term-${count}`], local.env, { deps: ctrlC(count, 'SIGTERM') });
      expect(result.exitCode).toBe(143);
    }
  });
});
