// tier: in-process
/**
 * The look for the key a lost create made (docs/contract.md §C4), case by
 * case: a gateway's 504 whose change lands seconds later, list reads lost
 * on the way, two jobs making keys of one name at once, the interactive
 * manager's create, a signal while svc looks, and the --json fields. svc's
 * fake sleep moves the reference server's clock, so a late change lands as
 * svc waits, in no time.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import type { Deps } from '../../../src/cli/terminal/deps.js';
import { TransportError } from '../../../src/client/errors.js';
import { createUndiciTransport, type Transport } from '../../../src/client/transport.js';
import { call, svc, useLocalServer, type RunResult } from '../../helpers/in-process.js';
import { scriptedPrompter } from '../../helpers/prompter.js';
import { records, startSpecServer } from '../../helpers/spec-server.js';

const local = useLocalServer({ plan: 'pro' });
const validFailure = new Ajv2020({ strict: true }).compile(JSON.parse(readFileSync(resolve(import.meta.dirname, '../../../docs/cli-error.schema.json'), 'utf8')));

const fault = (...rules: Record<string, unknown>[]) => call(local.server.url, 'POST', '/_local/faults', local.server.adminToken, { rules });
const clear = () => call(local.server.url, 'DELETE', '/_local/faults', local.server.adminToken);
const named = async (name: string) =>
  (JSON.parse((await svc(['keys', 'list', '--json', '--name', name], local.env)).stdout).keys as { id: string; name: string; expiresAt: string | null }[]).filter(
    (key) => key.name === name,
  );
/** svc, its sleeps moving the server's clock. */
const run = (args: string[], env: Record<string, string> = local.env, options: Parameters<typeof svc>[2] = {}) => svc(args, env, { server: local.server, ...options });

/** The ids svc says it revoked as the create's own. */
const revokedOwn = (result: RunResult) => [...result.stderr.matchAll(/(key_[a-z0-9]+) {2}created \S+ {2}revoked now/g)].map((m) => m[1]!);

/** The --json failure document, checked against docs/cli-error.schema.json. */
function failureDocument(result: RunResult) {
  const document = JSON.parse(result.stdout);
  expect(validFailure(document), JSON.stringify(validFailure.errors)).toBe(true);
  return document.error as { exitCode: number; orphans: { id: string; name: string; createdAt: string; revoked: boolean }[]; candidates: { id: string; name: string; createdAt: string | null }[] };
}

/** A key of its own for another job, made with the bootstrap key. */
async function jobKey(): Promise<string> {
  return (await call(local.server.url, 'POST', '/api/service/user/api-keys', local.env.SVC_API_KEY, { name: 'a job' })).json.secret;
}

describe('a gateway answers 504 while its upstream still works', () => {
  it('the key lands 12 s later: svc is still looking, tells it by the expiry it drew, and revokes it', async () => {
    await fault({ method: 'POST', path: '/user/api-keys', status: 504, body: 'html', landsAfterMs: 12_000 });
    const result = await run(['keys', 'create', 'behind-a-gateway', '--expires-in', '1d', '--json']);
    expect(result.exitCode).toBe(1);
    const { orphans, candidates } = failureDocument(result);
    expect(orphans).toEqual([{ id: expect.any(String), name: 'behind-a-gateway', createdAt: expect.any(String), revoked: true }]);
    expect(candidates).toEqual([]);
    expect(revokedOwn(result)).toEqual([orphans[0]!.id]);
    expect(await named('behind-a-gateway')).toEqual([]);
    // It waited for the landing, and stopped looking once it found the key, before the window's end.
    const waited = result.slept.reduce((a, b) => a + b, 0);
    expect(waited).toBeGreaterThanOrEqual(12_000);
    expect(waited).toBeLessThan(30_000);
  });

  it('under a name anyone may send and no expiry: the key that lands is listed, with its revoke command, and left alone', async () => {
    await fault({ method: 'POST', path: '/user/api-keys', status: 504, body: 'html', landsAfterMs: 20_000 });
    const result = await run(['keys', 'create', 'plain-behind-a-gateway']);
    expect(result.exitCode).toBe(1);
    const [landed] = await named('plain-behind-a-gateway');
    expect(result.stderr).toContain(`svc keys revoke ${landed!.id}`);
    expect(result.stderr).toContain('svc cannot tell whether it is the one this create made');
  });

  it("a change that lands 45 s after the request, as behind nginx's default 60 s: within the window, found and revoked", async () => {
    await fault({ method: 'POST', path: '/user/api-keys', status: 504, body: 'html', landsAfterMs: 45_000 });
    const result = await run(['keys', 'create', 'gateway-default', '--expires-in', '1d']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/made by this create, and no one has seen its secret\.\n {2}key_\w+ {2}created \S+ {2}revoked now/);
    expect(await named('gateway-default')).toEqual([]);
  });

  it('the key lands after svc stopped looking: svc says none is in the list yet, and where to look in a minute', async () => {
    await fault({ method: 'POST', path: '/user/api-keys', status: 504, body: 'html', landsAfterMs: 80_000 });
    const result = await run(['keys', 'create', 'too-late', '--expires-in', '1d']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("No key named 'too-late' made since the request began is in the list yet");
    expect(result.stderr).toMatch(/until 6\d s after the failure, when the create must have settled/);
    await call(local.server.url, 'POST', '/_local/clock', local.server.adminToken, { advanceSeconds: 30 });
    expect(await named('too-late')).toHaveLength(1);
  });

  it('svc run --ephemeral, a reset whose change lands 5 s later: the key is revoked, the command never runs', async () => {
    await fault({ method: 'POST', path: '/user/api-keys', then: 'reset', landsAfterMs: 5_000 });
    const result = await run(['run', '--ephemeral', '--json', '--', 'true']);
    expect(result.exitCode).toBe(1);
    const { orphans } = failureDocument(result);
    expect(orphans).toHaveLength(1);
    expect(orphans[0]).toMatchObject({ revoked: true, name: expect.stringMatching(/^run true \S+Z [a-z0-9]{6}$/) });
  });

  it('on a terminal, a progress line says what svc waits for between looks, and is cleared before the report', async () => {
    await fault({ method: 'POST', path: '/user/api-keys', status: 502 });
    const result = await run(['keys', 'create', 'watched'], local.env, { tty: true, columns: 80 });
    expect(result.stderr).toContain('\r\x1b[2KWaiting for the create to settle: next look in 1 s, 65 s at most (Ctrl-C stops)');
    expect(result.stderr).toContain('next look in 8 s, 58 s at most');
    expect(result.stderr).toMatch(/\r\x1b\[2Kerror: POST \/user\/api-keys failed \(502/);
  });

  it('--no-wait: one look, which a late change has not reached yet', async () => {
    await fault({ method: 'POST', path: '/user/api-keys', status: 504, landsAfterMs: 3_000 });
    const result = await run(['keys', 'create', 'no-wait-late', '--expires-in', '1d', '--no-wait']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('svc looked once: --no-wait lets it wait for no second look.');
    expect(result.slept).toEqual([]);
  });

  it('a wait budget that ends first: svc looks as long as --max-wait lets it, and says so', async () => {
    await fault({ method: 'POST', path: '/user/api-keys', status: 504, landsAfterMs: 20_000 });
    const result = await run(['keys', 'create', 'short-budget', '--expires-in', '1d', '--max-wait', '5']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/svc looked \d+ times, until --max-wait ran out, before the create must have settled/);
    expect(result.slept.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(5_000);
  });
});

/** The transport with 30 % of the list reads lost, half before they reach the server and half on the way back, drawn from `seed`. */
function lossy(seed: number): Transport {
  const base = createUndiciTransport();
  let state = seed;
  const draw = () => ((state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  return async (req) => {
    if (req.method !== 'GET' || new URL(req.url).pathname !== '/api/service/user/api-keys') return base(req);
    const roll = draw();
    if (roll < 0.15) throw new TransportError('the connection was closed before an answer came', false);
    if (roll < 0.3) {
      await base(req);
      throw new TransportError('the connection was closed before an answer came', true);
    }
    return base(req);
  };
}

describe('30 % of the list reads lost while svc looks', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8])('still finds its key, landed 8 s late, and revokes it (seed %i)', async (seed) => {
    const name = `lossy-${seed}`;
    await fault({ method: 'POST', path: '/user/api-keys', then: 'reset', landsAfterMs: 8_000 });
    const result = await run(['keys', 'create', name, '--expires-in', '1d'], local.env, { deps: { transport: lossy(seed) } });
    expect(result.exitCode).toBe(1);
    expect(revokedOwn(result), result.stderr).toHaveLength(1);
    expect(await named(name)).toEqual([]);
  });
});

describe('two jobs make keys of one name at the same moment', () => {
  it('on a terminal, both answers lost, no mark: each lists both keys, asks nothing, revokes nothing', async () => {
    const [a, b] = [await jobKey(), await jobKey()];
    await fault({ method: 'POST', path: '/user/api-keys', then: 'reset', after: true, times: 2 });
    const prompters = [scriptedPrompter([]), scriptedPrompter([])];
    const results = await Promise.all(
      [a, b].map((key, i) => run(['keys', 'create', 'same-name'], { ...local.env, SVC_API_KEY: key }, { tty: true, deps: { prompter: prompters[i]! } })),
    );
    const made = await named('same-name');
    expect(made).toHaveLength(2);
    for (const [i, result] of results.entries()) {
      expect(prompters[i]!.asked).toEqual([]);
      expect(result.exitCode).toBe(1);
      expect(revokedOwn(result)).toEqual([]);
    }
  });

  it('both answers lost, each with an expiry svc drew: each revokes its own key, never the other job\'s', async () => {
    const [a, b] = [await jobKey(), await jobKey()];
    await fault({ method: 'POST', path: '/user/api-keys', status: 503, after: true, times: 2 });
    const sent: (string | null)[] = [null, null];
    const capture = (i: number): Transport => {
      const base = createUndiciTransport();
      return async (req) => {
        if (req.method === 'POST') sent[i] = JSON.parse(req.body!).expiresAt;
        return base(req);
      };
    };
    const results = await Promise.all(
      [a, b].map((key, i) => run(['keys', 'create', 'same-name-marked', '--expires-in', '2h', '--json'], { ...local.env, SVC_API_KEY: key }, { deps: { transport: capture(i) } })),
    );
    expect(sent[0]).not.toBe(sent[1]);
    const log = (await call(local.server.url, 'GET', '/_local/requests?limit=50', local.server.adminToken)).json.requests as { method: string; path: string; status: number; keyHint: string }[];
    for (const [i, result] of results.entries()) {
      const { orphans } = failureDocument(result);
      expect(orphans).toHaveLength(1);
      const hint = `sk_${[a, b][i]!.slice(3, 7)}…${[a, b][i]!.slice(-4)}`;
      // Each job's revoke, by its own key, is of the key it made.
      const revokes = log.filter((r) => r.method === 'DELETE' && r.keyHint === hint);
      expect(revokes.map((r) => r.path.split('/').pop())).toEqual([orphans[0]!.id]);
    }
    expect(new Set(results.map((r) => failureDocument(r).orphans[0]!.id)).size).toBe(2);
    expect(await named('same-name-marked')).toEqual([]);
  });

  it('on a terminal, two 201s svc cannot read: each offers to revoke only the key it made, told by its expiry', async () => {
    const spec = await startSpecServer({ record: records.full });
    try {
      spec.rules.push({ method: 'POST', times: 2, then: { status: 201, body: `created; the secret is somewhere: sk_${'Zp4'.repeat(21)}q\n` } });
      const env = { SVC_BASE_URL: spec.url, SVC_API_KEY: spec.apiKey, SVC_CONFIG_DIR: local.configDir };
      const prompters = [scriptedPrompter([{ confirm: true }]), scriptedPrompter([{ confirm: true }])];
      const results = await Promise.all(prompters.map((prompter) => svc(['keys', 'create', 'garbled-twice', '--expires-in', '2h'], env, { tty: true, deps: { prompter } })));
      const made = [...spec.keys.values()].filter((k) => k.name === 'garbled-twice');
      expect(made).toHaveLength(0);
      const offered = results.map((result) => /\nerror: The create failed: (\S+), the key it made, is revoked now\.$/.exec(result.stderr)![1]!);
      expect(new Set(offered).size).toBe(2);
      for (const [i, result] of results.entries()) {
        expect(prompters[i]!.asked).toEqual([expect.stringContaining('Revoke it now?')]);
        expect(result.stdout).toBe(`created; the secret is somewhere: sk_${'Zp4'.repeat(21)}q`);
        // The other job's key is never named to this one.
        expect(result.stderr).not.toContain(offered[1 - i]!);
      }
    } finally {
      await spec.close();
    }
  });

  it('svc run --ephemeral under its default names, twice in one second: each revokes its own key only', async () => {
    await fault({ method: 'POST', path: '/user/api-keys', then: 'reset', after: true, times: 2 });
    const results = await Promise.all([run(['run', '--ephemeral', '--json', '--', 'true']), run(['run', '--ephemeral', '--json', '--', 'true'])]);
    const [first, second] = results.map((result) => failureDocument(result));
    expect(first!.orphans).toHaveLength(1);
    expect(second!.orphans).toHaveLength(1);
    expect(first!.orphans[0]!.name).not.toBe(second!.orphans[0]!.name);
    expect(first!.orphans[0]!.id).not.toBe(second!.orphans[0]!.id);
  });
});

describe('keys another client used, and keys svc cannot date', () => {
  it('a same-named key made since the request began but already used is no candidate: someone holds its secret', async () => {
    const other = await call(local.server.url, 'POST', '/api/service/user/api-keys', local.env.SVC_API_KEY, { name: 'used-by-someone' });
    await call(local.server.url, 'GET', '/api/service/workspace', other.json.secret);
    await fault({ method: 'POST', path: '/user/api-keys', status: 502 });
    const result = await run(['keys', 'create', 'used-by-someone', '--json']);
    const { candidates } = failureDocument(result);
    expect(candidates).toEqual([]);
    expect(result.stderr).not.toContain(other.json.id);
  });

  it('--json: a key whose creation time svc cannot read is a candidate whose createdAt is null', async () => {
    const spec = await startSpecServer({ record: records.bare });
    try {
      const older = spec.addKey('undated');
      spec.rules.push({ method: 'POST', times: 1, then: 'drop', work: false });
      const result = await svc(['keys', 'create', 'undated', '--json', '--no-wait'], { SVC_BASE_URL: spec.url, SVC_API_KEY: spec.apiKey, SVC_CONFIG_DIR: local.configDir });
      expect(failureDocument(result)).toMatchObject({ orphans: [], candidates: [{ id: older.id, name: 'undated', createdAt: null }] });
    } finally {
      await spec.close();
    }
  });
});

/** Signals as a person sends them while svc waits between looks: one at the first pause's first sleep. */
function signalAtFirstPause(signal: NodeJS.Signals): Pick<Deps, 'onSignal' | 'sleep'> {
  const listeners = new Set<(signal: NodeJS.Signals) => void>();
  let sent = false;
  return {
    onSignal(_signals, listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    sleep: () => {
      if (!sent) {
        sent = true;
        for (const listener of [...listeners]) listener(signal);
      }
      return new Promise<void>(() => {});
    },
  };
}

describe('a signal while svc looks', () => {
  it('stops the look at once and says what it found so far, exit 143 for SIGTERM', async () => {
    await fault({ method: 'POST', path: '/user/api-keys', status: 502 });
    const result = await svc(['keys', 'create', 'stopped-looking', '--json'], local.env, { deps: signalAtFirstPause('SIGTERM') });
    expect(result.exitCode).toBe(143);
    expect(failureDocument(result).exitCode).toBe(143);
    expect(result.stderr).toContain('svc looked once, then stopped as asked, before the create must have settled.');
    await clear();
  });
});
