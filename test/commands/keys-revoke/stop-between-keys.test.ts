// tier: in-process
/**
 * A change to several keys stopped by a signal (a cancelled CI job, Ctrl-C):
 * the first signal stops it between two keys, with every change that landed
 * told as it landed and the keys not tried named, exit 128 + n; a second
 * stops at once, naming the key whose change may or may not have landed.
 * Nothing that landed goes untold, and nothing is told that did not land.
 */
import { describe, expect, it } from 'vitest';
import type { Deps } from '../../../src/cli/terminal/deps.js';
import { PROGRESS_AFTER_MS } from '../../../src/cli/terminal/wait.js';
import { createUndiciTransport, type Transport } from '../../../src/client/transport.js';
import { call, svc, useLocalServer } from '../../helpers/in-process.js';
import { shownText } from '../../helpers/shown-text.js';
import { atNth, signalsAt } from '../../helpers/signals.js';
import { keyBatch, told } from '../../helpers/key-batch.js';

const local = useLocalServer({ plan: 'pro' });

const { makeKeys, onServer } = keyBatch(local);

describe('a signal partway through revoking several keys', () => {
  it('the first stops between two keys: each revoked key was told, the rest are named and left, exit 143', async () => {
    const made = await makeKeys('batch-term', 5);
    const result = await svc(['keys', 'revoke', '--name', 'batch-term', '--all', '--yes'], local.env, { deps: signalsAt(atNth('DELETE', 2, ['SIGTERM'])) });
    expect(result.exitCode).toBe(143);
    const revoked = told(result.stderr, 'Revoked');
    expect(revoked).toHaveLength(2);
    const left = await onServer('batch-term');
    expect([...left.keys()].sort()).toEqual(made.filter((id) => !revoked.includes(id)).sort());
    expect(result.stderr).toContain(`Stopping once ${revoked[1]} is done (SIGTERM again to stop at once).`);
    const last = result.stderr.split('\n').at(-1)!;
    expect(last).toMatch(/^error: Stopped by SIGTERM before these were tried: (key_\w+, ){2}key_\w+\.$/);
    for (const id of left.keys()) expect(last).toContain(id);
  });

  it('under --json stdout holds the answers of the keys revoked, and nothing claims the others', async () => {
    await makeKeys('batch-json', 4);
    const result = await svc(['keys', 'revoke', '--name', 'batch-json', '--all', '--yes', '--json'], local.env, { deps: signalsAt(atNth('DELETE', 3, ['SIGINT'])) });
    expect(result.exitCode).toBe(130);
    const { changed: answers, notTried } = JSON.parse(result.stdout) as { changed: { id: string }[]; notTried: string[] };
    expect(answers).toHaveLength(3);
    expect(notTried).toHaveLength(1);
    const left = await onServer('batch-json');
    expect(left.size).toBe(1);
    for (const { id } of answers) expect(left.has(id)).toBe(false);
  });

  it('a second signal stops at once and names the key whose revoke was out', async () => {
    const made = await makeKeys('batch-twice', 4);
    const result = await svc(['keys', 'revoke', ...made, '--yes'], local.env, { deps: signalsAt(atNth('DELETE', 2, ['SIGINT', 'SIGINT'])) });
    expect(result.exitCode).toBe(130);
    expect(told(result.stderr, 'Revoked')).toEqual([made[0]]);
    expect(result.stderr).toContain(`Stopped by SIGINT while ${made[1]} was being changed: it may or may not have been revoked; \`svc keys view ${made[1]}\` tells.`);
    expect(result.stderr).toContain(`Revoked before that: ${made[0]}.`);
    const left = await onServer('batch-twice');
    expect(left.has(made[0]!)).toBe(false);
    expect(left.has(made[2]!) && left.has(made[3]!)).toBe(true);
  });

  it('under --json, a second signal\'s document names the keys revoked before it', async () => {
    const made = await makeKeys('batch-twice-json', 3);
    const result = await svc(['keys', 'revoke', ...made, '--yes', '--json'], local.env, { deps: signalsAt(atNth('DELETE', 2, ['SIGTERM', 'SIGTERM'])) });
    expect(result.exitCode).toBe(143);
    expect(JSON.parse(result.stdout).error.message).toContain(`Revoked before that: ${made[0]}.`);
  });

  it('an argument no key has as its id, left unread as a name by the stop, is said so; a name several keys share too', async () => {
    const made = await makeKeys('batch-named', 2);
    await makeKeys('batch-shared', 2);
    const early = await svc(['keys', 'revoke', 'key_nosuch', made[0]!, made[1]!, '--yes'], local.env, { deps: signalsAt(atNth('DELETE', 2, ['SIGTERM'])) });
    expect(early.exitCode).toBe(143);
    expect(early.stderr).toContain("No key has the id key_nosuch; svc stopped before looking it up as a name.");
    expect(early.stderr).not.toMatch(/before these were tried: .*key_nosuch/);

    const late = await svc(['keys', 'revoke', made[1]!, 'batch-shared', '--yes'], local.env, { deps: signalsAt(atNth('GET', 1, ['SIGTERM'])) });
    expect(late.exitCode).toBe(143);
    expect(late.stderr).toContain("'batch-shared' is the name of 2 keys, so it names none of them");
  });

  it('prune: the keys revoked before the stop are told and in its report', async () => {
    const made = await makeKeys('batch-prune', 4);
    for (const id of made) await call(local.server.url, 'PATCH', `/api/service/user/api-keys/${id}`, local.server.apiKey!, { enabled: false });
    const result = await svc(['keys', 'prune', '--disabled', '--yes', '--json'], local.env, { deps: signalsAt(atNth('DELETE', 2, ['SIGHUP'])) });
    expect(result.exitCode).toBe(129);
    const revoked = (JSON.parse(result.stdout) as { changed: { id: string }[] }).changed.map((answer) => answer.id);
    expect(revoked).toEqual(told(result.stderr, 'Revoked'));
    expect(revoked).toHaveLength(2);
    const left = await onServer('batch-prune');
    for (const id of revoked) expect(left.has(id)).toBe(false);
    expect(left.size).toBe(2);
  });
});

describe('on a terminal, where a slow request shows its progress line', () => {
  it('Ctrl-C while the line shows still lets the key in hand finish, and tells it', async () => {
    const made = await makeKeys('batch-tty', 3);
    const listeners = new Set<(signal: NodeJS.Signals) => void>();
    const real = createUndiciTransport();
    let deletes = 0;
    const transport: Transport = (req) => {
      const answer = real(req);
      // After the progress line has subscribed to Ctrl-C (its first tick comes as a microtask, below).
      if (req.method === 'DELETE' && ++deletes === 2) setImmediate(() => [...listeners].forEach((listener) => listener('SIGINT')));
      return answer;
    };
    const deps: Partial<Deps> = {
      transport,
      onSignal(_signals, listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      // Every request's progress line is drawn at once, as on a slow server; its later ticks never come.
      schedule: (ms, run) => {
        let cancelled = false;
        if (ms === PROGRESS_AFTER_MS) queueMicrotask(() => cancelled || run());
        return () => (cancelled = true);
      },
    };
    const result = await svc(['keys', 'revoke', ...made, '--yes'], local.env, { tty: true, deps });
    expect(result.exitCode).toBe(130);
    const revoked = told(shownText(result.stderr), 'Revoked');
    expect(revoked).toEqual(made.slice(0, 2));
    expect([...(await onServer('batch-tty')).keys()]).toEqual([made[2]]);
    expect(shownText(result.stderr)).toContain(`Stopped by SIGINT before these were tried: ${made[2]}.`);
  });
});
