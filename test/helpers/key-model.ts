/**
 * A model of what svc and the reference server keep, for the model-based
 * tests (fast-check's fc.commands): which keys exist, their names, whether
 * they are enabled and when they expire, which key each profile holds and
 * its pending rotation. Each step says beforehand what svc must do; after
 * it, the server's keys (read with the bootstrap key, which no step
 * touches) and the config file must match the model exactly. A command
 * whose outcome svc cannot know (a create whose answer was lost) may leave
 * a key behind only when svc names it, and svc revokes it when the expiry
 * it computed tells it for its own; everything svc reports as done must
 * have landed, and nothing it reports as failed may have, unless it says so.
 *
 * Steps refer to keys by position, resolved when they run, so that
 * fast-check can generate and shrink them without knowing any id. With
 * `owned`, each profile only ever touches keys made through it, so that
 * steps on distinct profiles can run at once in any order and still have
 * one outcome.
 */
import fc from 'fast-check';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { call } from './reference-server.mjs';

/** The seed of this run: SVC_MODEL_SEED replays one that fast-check printed. */
export function modelSeed(): number {
  const seed = process.env.SVC_MODEL_SEED ? Number(process.env.SVC_MODEL_SEED) : Math.floor(Math.random() * 2 ** 31);
  if (!Number.isSafeInteger(seed)) throw new Error(`SVC_MODEL_SEED must be an integer, not ${process.env.SVC_MODEL_SEED}`);
  return seed;
}

const PROFILES = ['p1', 'p2', 'p3'] as const;
type ProfileName = (typeof PROFILES)[number];

/** What svc does with a step: the built svc as a process, or main() in-process; both answer in this shape. */
export type Runner = (
  args: string[],
  env: Record<string, string | undefined>,
  options?: { input?: string },
) => Promise<{ exitCode: number; stdout: string; stderr: string }>;

interface World {
  url: string;
  adminToken: string;
  /** The world's first key: the steps' `env` actor, and how the checks read the server. Never a step's target. */
  bootstrap: string;
  bootstrapId: string;
  configDir: string;
  run: Runner;
}

interface KeyModel {
  id: string;
  name: string;
  /** Null for a key whose create answer was lost: nobody saw its secret. */
  secret: string | null;
  enabled: boolean;
  expiresAt: number | null;
  createdAt: number;
  owner: ProfileName;
}

interface ProfileModel {
  apiKey?: string;
  pending?: { oldId: string; newId: string };
}

interface Model {
  /** The keys the server has, in the order they were made. */
  keys: KeyModel[];
  /** Ids and secrets of revoked keys, with the profile that made them. */
  dead: { id: string; secret: string | null; owner: ProfileName }[];
  profiles: Record<ProfileName, ProfileModel>;
  /** Names are k1, k2, …: a lost create is looked for by name, and a name of its own tells its key from every other. */
  names: number;
  owned: boolean;
}

const emptyModel = (owned: boolean): Model => ({ keys: [], dead: [], profiles: { p1: {}, p2: {}, p3: {} }, names: 0, owned });

/** A fault on the step's one request that changes something. `503` does no work; the others do it and lose the answer. */
type Fault = 'none' | '503' | '503-after' | 'drop-after';
const RULES: Record<Exclude<Fault, 'none'>, Record<string, unknown>> = {
  '503': { status: 503 },
  '503-after': { status: 503, after: true },
  'drop-after': { after: true, then: 'reset' },
};

/** A key by its place among those the step may touch, or the one the step's profile holds (any, when it holds none of them). */
type KeyChoice = number | 'own';

/** Who the command runs as: the profile's own key, or SVC_API_KEY with the bootstrap key (the profile still read, and changed by --overlap). */
type Actor = 'profile' | 'env';

export type Step =
  | { kind: 'login'; profile: ProfileName; pick: number; dead: boolean; fault: boolean }
  | { kind: 'logout'; profile: ProfileName }
  | { kind: 'create'; profile: ProfileName; actor: Actor; expiresIn: '1h' | '2d' | '30d' | null; json: boolean; fault: Fault }
  | { kind: 'revoke'; profile: ProfileName; actor: Actor; pick: KeyChoice; dead: boolean; fault: Fault }
  | { kind: 'switch'; profile: ProfileName; actor: Actor; pick: KeyChoice; enabled: boolean; fault: Fault }
  | {
      kind: 'rotate';
      profile: ProfileName;
      actor: Actor;
      pick: KeyChoice;
      retire: 'revoke' | 'disable-old' | 'overlap';
      save: boolean;
      json: boolean;
      fault: Fault;
      faultOn: 'create' | 'retire';
    }
  | { kind: 'finish'; profile: ProfileName; actor: Actor; cancel: boolean; fault: Fault }
  | { kind: 'clock'; seconds: number };

const profile = fc.constantFrom(...PROFILES);
const actor = fc.constantFrom<Actor>('profile', 'env');
const pick = fc.nat(30);
const choice = fc.oneof({ weight: 1, arbitrary: fc.constant<KeyChoice>('own') }, { weight: 2, arbitrary: pick as fc.Arbitrary<KeyChoice> });
const fault = fc.oneof({ weight: 5, arbitrary: fc.constant<Fault>('none') }, { weight: 3, arbitrary: fc.constantFrom<Fault>('503', '503-after', 'drop-after') });
/** A dead key or id: a step aimed at one is worth having, but is not most of what a person does. */
const rarely = fc.constantFrom(false, false, false, true);

/** The steps that may run beside others on distinct profiles: no clock, no fault that any other request could take. */
export function profileStep(options: { faults: boolean }): fc.Arbitrary<Step> {
  const maybeFault = options.faults ? fault : fc.constant<Fault>('none');
  return fc.oneof(
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('login' as const), profile, pick, dead: rarely, fault: options.faults ? fc.boolean() : fc.constant(false) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('logout' as const), profile }) },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('create' as const),
        profile,
        actor,
        expiresIn: fc.constantFrom(null, '1h' as const, '2d' as const, '30d' as const),
        json: fc.boolean(),
        fault: maybeFault,
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('revoke' as const), profile, actor, pick: choice, dead: rarely, fault: maybeFault }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('switch' as const), profile, actor, pick: choice, enabled: fc.boolean(), fault: maybeFault }) },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('rotate' as const),
        profile,
        actor,
        pick: choice,
        retire: fc.constantFrom('revoke' as const, 'disable-old' as const, 'overlap' as const),
        save: fc.boolean(),
        json: fc.boolean(),
        fault: maybeFault,
        faultOn: fc.constantFrom('create' as const, 'retire' as const),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('finish' as const), profile, actor, cancel: fc.boolean(), fault: maybeFault }) },
  );
}

/**
 * Where every sequence starts, so that its first steps already have keys to
 * act on: each profile logged in with a key of its own. Two rounds of steps
 * on distinct profiles, which may run at once.
 */
const PRELUDE: Step[][] = [
  PROFILES.map((p): Step => ({ kind: 'create', profile: p, actor: 'env', expiresIn: null, json: true, fault: 'none' })),
  PROFILES.map((p, i): Step => ({ kind: 'login', profile: p, pick: i, dead: false, fault: false })),
];

/** Clock moves a few minutes off whole hours and days, so that no sum of them lands on an expiry's edge. */
export const clockStep: fc.Arbitrary<Step> = fc.record({ kind: fc.constant('clock' as const), seconds: fc.constantFrom(97 * 60, 25 * 3600 + 7 * 60, 8 * 86400 + 13 * 60) });

function describeStep(step: Step): string {
  const { kind, ...rest } = step;
  return `${kind}(${Object.entries(rest)
    .filter(([, v]) => v !== 'none' && v !== false && v !== null)
    .map(([k, v]) => (v === true ? k : `${k}=${v}`))
    .join(' ')})`;
}

interface ServerKey {
  id: string;
  name: string;
  hint: string;
  enabled: boolean;
  expiresAt: number | null;
  createdAt: number;
}

const DURATIONS = { '1h': 3_600_000, '2d': 2 * 86_400_000, '30d': 30 * 86_400_000 };
const hintOf = (secret: string) => `sk_${secret.slice(3, 7)}…${secret.slice(-4)}`;
const time = (iso: string | null) => (iso === null ? null : Date.parse(iso));

/** What one step needs to run, and how to judge what came of it. */
interface Planned {
  args: string[];
  env: Record<string, string | undefined>;
  input?: string;
  rule?: Record<string, unknown>;
  /**
   * Checks svc's result against the model and brings the model up to date.
   * `claim(name)` hands over the keys of that name that appeared on the
   * server during the step, each to one claimant.
   */
  settle(result: { exitCode: number; stdout: string; stderr: string }, claim: (name: string) => ServerKey[]): void;
}

class Admin {
  constructor(private readonly world: World) {}

  async send(method: string, path: string, body?: unknown): Promise<any> {
    const res = await call(this.world.url, method, `/_local${path}`, this.world.adminToken, body);
    if (res.status >= 300) throw new Error(`${method} /_local${path} answered ${res.status}: ${res.text}`);
    return res.json;
  }

  async now(): Promise<number> {
    return Date.parse((await this.send('GET', '/clock')).now);
  }
}

async function serverKeys(world: World): Promise<ServerKey[]> {
  const res = await call(world.url, 'GET', '/api/service/user/api-keys', world.bootstrap);
  if (res.status !== 200) throw new Error(`listing the keys answered ${res.status}: ${res.text}`);
  return (res.json.keys as Record<string, any>[])
    .filter((k) => k.id !== world.bootstrapId)
    .map((k) => ({ id: k.id, name: k.name, hint: k.hint, enabled: k.enabled, expiresAt: time(k.expiresAt), createdAt: time(k.createdAt)! }));
}

function configProfiles(world: World): Record<string, { apiKey?: string; pendingRotation?: { oldId: string; newId: string } }> {
  const file = join(world.configDir, 'config.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).profiles : {};
}

/** The model and the world agree: every key and its state, every profile's key and pending rotation. */
function expectAgreement(model: Model, keys: ServerKey[], world: World): void {
  const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
  expect(keys.map(({ id, name, enabled, expiresAt }) => ({ id, name, enabled, expiresAt })).sort(byId), "the server's keys").toEqual(
    model.keys.map(({ id, name, enabled, expiresAt }) => ({ id, name, enabled, expiresAt })).sort(byId),
  );
  const file = configProfiles(world);
  const seen = Object.fromEntries(
    PROFILES.map((p) => [p, { apiKey: file[p]?.apiKey, pending: file[p]?.pendingRotation && { oldId: file[p].pendingRotation!.oldId, newId: file[p].pendingRotation!.newId } }]),
  );
  const wanted = Object.fromEntries(PROFILES.map((p) => [p, { apiKey: model.profiles[p].apiKey, pending: model.profiles[p].pending }]));
  expect(seen, 'the profiles in config.json').toEqual(wanted);
  expect(Object.keys(file).filter((p) => !(PROFILES as readonly string[]).includes(p)), 'profiles no step named').toEqual([]);
}

/**
 * Runs `steps` (one, or several on distinct profiles at once), then checks
 * each result and the world against the model. Faults are set just before
 * and cleared just after, so no rule outlives its step.
 */
async function runSteps(model: Model, world: World, steps: Step[]): Promise<void> {
  const admin = new Admin(world);
  for (const step of steps) {
    if (step.kind === 'clock') await admin.send('POST', '/clock', { advanceSeconds: step.seconds });
  }
  const now = await admin.now();
  const planned = steps.flatMap((step) => (step.kind === 'clock' ? [] : [plan(step, model, now, world)]));
  const rules = planned.flatMap((p) => (p.rule ? [p.rule] : []));
  if (rules.length > 0) await admin.send('POST', '/faults', { rules });
  const results = await Promise.all(planned.map((p) => world.run(p.args, p.env, p.input === undefined ? {} : { input: p.input })));
  await admin.send('DELETE', '/faults');
  const keys = await serverKeys(world);
  const appeared = keys.filter((k) => !model.keys.some((m) => m.id === k.id));
  const claim = (name: string) => {
    const mine = appeared.filter((k) => k.name === name);
    for (const key of mine) appeared.splice(appeared.indexOf(key), 1);
    return mine;
  };
  planned.forEach((p, i) => {
    const { exitCode, stdout, stderr } = results[i]!;
    const context = `svc ${p.args.join(' ')} (exit ${exitCode})\n--- stdout\n${stdout}\n--- stderr\n${stderr}`;
    try {
      p.settle(results[i]!, claim);
    } catch (error) {
      (error as Error).message = `${(error as Error).message}\n${context}`;
      throw error;
    }
  });
  expect(appeared, 'keys that appeared although no step made them').toEqual([]);
  expectAgreement(model, keys, world);
}

/** The secret svc printed for a new key: stdout alone when piped, in the document with --json. */
function printedSecret(stdout: string, json: boolean): string {
  if (!json) return stdout.trim();
  return JSON.parse(stdout).key.secret;
}

/** The key svc says it revoked after a lost create answer, as its own (docs/contract.md §C4). */
function revokedOrphan(stderr: string): string {
  const revoked = [...stderr.matchAll(/(key_[a-z0-9]+) {2}created \S+ {2}revoked now/g)].map((m) => m[1]!);
  expect(revoked, 'the one key svc says it revoked').toHaveLength(1);
  return revoked[0]!;
}

/** The keys svc says to revoke after a lost create answer. */
const namedIds = (text: string) => [...new Set([...text.matchAll(/svc keys revoke (key_[a-z0-9]+)/g)].map((m) => m[1]!))];

/**
 * svc names the key a lost create made (one it cannot tell for its own: no
 * mark), and no key that is known to be older (a rotation's old key). It
 * may name another key of that name made a moment before the request, which
 * nothing can tell from it (docs/contract.md §C4): svc reads "since the
 * request began" on the server's clock from a Date header of whole seconds,
 * with 1.5 s to spare.
 */
function expectOrphanNamed(stderr: string, made: ServerKey, model: Model, now: number, old?: KeyModel): void {
  const named = namedIds(stderr);
  expect(named).toContain(made.id);
  const lookalikes = model.keys.filter((k) => k.name === made.name && k !== old && k.id !== made.id && k.createdAt >= now - 3_000).map((k) => k.id);
  expect(named.filter((id) => id !== made.id && !lookalikes.includes(id)), 'keys named as made by a lost create that are older').toEqual([]);
}

function plan(step: Exclude<Step, { kind: 'clock' }>, model: Model, now: number, world: World): Planned {
  const mine = (p: ProfileName) => (model.owned ? model.keys.filter((k) => k.owner === p) : model.keys);
  const live = (k: KeyModel | undefined) => k !== undefined && k.enabled && (k.expiresAt === null || k.expiresAt > now);
  const held = model.profiles[step.profile];
  const choose = (keys: KeyModel[], pick: KeyChoice) => (pick === 'own' ? (keys.find((k) => k.secret === held.apiKey) ?? keys[0]) : keys[pick % Math.max(1, keys.length)]);
  const env = { SVC_CONFIG_DIR: world.configDir, SVC_BASE_URL: world.url, SVC_PROFILE: step.profile };

  if (step.kind === 'login') {
    // A working key, or (dead) one the server refuses: disabled, expired or revoked.
    const candidates = (
      step.dead ? [...mine(step.profile).filter((k) => !live(k)), ...model.dead.filter((d) => !model.owned || d.owner === step.profile)] : mine(step.profile).filter(live)
    ).filter((k) => k.secret !== null);
    const target = candidates[step.pick % Math.max(1, candidates.length)];
    // Never issued: a key of the right form that the server has never seen.
    const secret = target?.secret ?? `sk_${'0'.repeat(64)}`;
    const works = live(model.keys.find((k) => k.secret === secret));
    return {
      args: ['login', '--with-key'],
      env,
      input: secret,
      rule: step.fault ? { method: 'GET', path: '/user/api-keys', status: 503 } : undefined,
      settle({ exitCode }) {
        expect(exitCode).toBe(works ? 0 : 3);
        if (works) held.apiKey = secret;
      },
    };
  }
  if (step.kind === 'logout') {
    return {
      args: ['logout'],
      env,
      settle({ exitCode }) {
        expect(exitCode).toBe(0);
        delete held.apiKey;
      },
    };
  }

  const actorKey = step.actor === 'env' ? world.bootstrap : held.apiKey;
  const keyEnv = { ...env, SVC_API_KEY: step.actor === 'env' ? world.bootstrap : undefined };
  // Without a key the command stops before anything else; with a key the server refuses, it stops at the first request.
  const noKey = actorKey === undefined;
  const refused = !noKey && step.actor === 'profile' && !live(model.keys.find((k) => k.secret === actorKey));
  const rule = (method: string, id: string | null) =>
    step.fault === 'none' ? undefined : { method, path: id === null ? '/user/api-keys' : `/user/api-keys/${id}`, ...RULES[step.fault] };
  /**
   * The step's own key is the target and a fault lost the answer after the work: the retry is refused (401), the
   * key being gone or off, and svc says the key was refused (exit 3) though it did what was asked.
   */
  const lockedOutByRetry = (target: KeyModel) => target.secret === actorKey && (step.fault === '503-after' || step.fault === 'drop-after');
  const stopped = (exitCode: number) => {
    if (noKey || refused) {
      expect(exitCode).toBe(3);
      return true;
    }
    return false;
  };
  const kill = (key: KeyModel) => {
    model.keys.splice(model.keys.indexOf(key), 1);
    model.dead.push({ id: key.id, secret: key.secret, owner: key.owner });
  };

  switch (step.kind) {
    case 'create': {
      const name = `k${++model.names}`;
      const lifetime = step.expiresIn === null ? null : DURATIONS[step.expiresIn];
      return {
        args: ['keys', 'create', name, ...(step.expiresIn ? ['--expires-in', step.expiresIn] : []), ...(step.json ? ['--json'] : [])],
        env: keyEnv,
        rule: rule('POST', null),
        settle({ exitCode, stdout, stderr }, claim) {
          const made = claim(name);
          if (stopped(exitCode)) return expect(made).toEqual([]);
          if (step.fault === '503') {
            expect(exitCode).toBe(1);
            expect(stderr).toContain(`No key named '${name}' made since the request began is in the list yet`);
            return expect(made).toEqual([]);
          }
          if (step.fault !== 'none' && lifetime !== null) {
            // The expiry svc computed carries its mark: the key the lost answer made is svc's own, and revoked at once.
            expect(exitCode).toBe(1);
            expect(made, 'a lost create whose key svc could tell for its own').toEqual([]);
            const revoked = revokedOrphan(stderr);
            model.dead.push({ id: revoked, secret: null, owner: step.profile });
            return;
          }
          expect(made).toHaveLength(1);
          const key = made[0]!;
          // Never later than asked; earlier by svc's mark, a hundredth of the lifetime under half a minute, and the steps' own time.
          if (lifetime !== null) {
            expect(key.expiresAt! - (now + lifetime), 'expiry of the new key').toBeLessThan(10_000);
            expect(now + lifetime - key.expiresAt!, 'expiry of the new key').toBeLessThan(Math.min(29_999, Math.max(999, lifetime / 100)) + 10_000);
          }
          else expect(key.expiresAt).toBeNull();
          let secret: string | null = null;
          if (step.fault === 'none') {
            expect(exitCode).toBe(0);
            secret = printedSecret(stdout, step.json);
            expect(hintOf(secret)).toBe(key.hint);
          } else {
            expect(exitCode).toBe(1);
            expectOrphanNamed(stderr, key, model, now);
          }
          model.keys.push({ id: key.id, name, secret, enabled: true, expiresAt: key.expiresAt, createdAt: key.createdAt, owner: step.profile });
        },
      };
    }

    case 'revoke': {
      const keys = mine(step.profile);
      const dead = model.dead.filter((d) => !model.owned || d.owner === step.profile);
      const target = step.dead ? undefined : choose(keys, step.pick);
      const id = target?.id ?? dead[step.pick === 'own' ? 0 : step.pick % Math.max(1, dead.length)]?.id ?? 'key_00000000000000000000';
      return {
        args: ['keys', 'revoke', id, '--yes'],
        env: keyEnv,
        rule: rule('DELETE', id),
        settle({ exitCode }) {
          if (stopped(exitCode)) return;
          if (!target) {
            // A retry after a lost answer takes 404 for the work done: the key is gone either way.
            return expect(exitCode).toBe(step.fault === 'none' ? 4 : 0);
          }
          expect(exitCode).toBe(lockedOutByRetry(target) ? 3 : 0);
          kill(target);
        },
      };
    }

    case 'switch': {
      const keys = mine(step.profile);
      const target = choose(keys, step.pick);
      const id = target?.id ?? 'key_00000000000000000000';
      return {
        // A script that means to disable what may be its own key says so, as it does for a revoke (the refusal without it: keys-enable-disable/keys.test.ts).
        args: step.enabled ? ['keys', 'enable', id] : ['keys', 'disable', id, '--yes'],
        env: keyEnv,
        rule: rule('PATCH', id),
        settle({ exitCode }) {
          if (stopped(exitCode)) return;
          if (!target) return expect(exitCode).toBe(4);
          const lockedOut = !step.enabled && target.enabled && lockedOutByRetry(target);
          expect(exitCode).toBe(lockedOut ? 3 : 0);
          target.enabled = step.enabled;
        },
      };
    }

    case 'rotate': {
      const keys = mine(step.profile);
      const old = choose(keys, step.pick);
      const id = old?.id ?? 'key_00000000000000000000';
      const overlapBlocked = step.retire === 'overlap' && held.pending !== undefined;
      // Every profile that holds the old key gets the new one, or the old key stays.
      const holders = PROFILES.filter((p) => old?.secret != null && model.profiles[p].apiKey === old.secret);
      const faultOn = step.faultOn === 'create' ? rule('POST', null) : rule(step.retire === 'disable-old' ? 'PATCH' : 'DELETE', id);
      return {
        args: [
          'keys',
          'rotate',
          id,
          '--yes',
          ...(step.retire === 'revoke' ? [] : [`--${step.retire}`]),
          ...(step.save ? ['--save'] : []),
          ...(step.json ? ['--json'] : []),
        ],
        env: keyEnv,
        rule: faultOn,
        settle({ exitCode, stdout, stderr }, claim) {
          const made = old ? claim(old.name) : [];
          if (overlapBlocked && !noKey) expect(exitCode).toBe(2);
          else if (stopped(exitCode)) return expect(made).toEqual([]);
          if (overlapBlocked) return expect(made).toEqual([]);
          if (!old) return expect(exitCode).toBe(4);
          const createFault = step.faultOn === 'create' ? step.fault : 'none';
          if (createFault === '503') {
            expect(exitCode).toBe(1);
            return expect(made).toEqual([]);
          }
          // An expired key's replacement gets an expiry svc computes, with its mark: a lost answer's key is svc's own, and revoked.
          if (createFault !== 'none' && old.expiresAt !== null && old.expiresAt <= now) {
            expect(exitCode).toBe(1);
            expect(made, 'a lost create whose key svc could tell for its own').toEqual([]);
            model.dead.push({ id: revokedOrphan(stderr), secret: null, owner: old.owner });
            return;
          }
          expect(made).toHaveLength(1);
          const key = made[0]!;
          // The old key's expiry carries over; an expired one's lifetime starts again.
          if (old.expiresAt === null) expect(key.expiresAt).toBeNull();
          else if (old.expiresAt > now) expect(key.expiresAt).toBe(old.expiresAt);
          else {
            // The old key's lifetime again, less svc's mark: a hundredth of it, at least 999 ms, under half a minute.
            const lifetime = old.expiresAt - old.createdAt;
            expect(key.expiresAt! - (now + lifetime), 'expiry of the replacement').toBeLessThan(10_000);
            expect(now + lifetime - key.expiresAt!, 'expiry of the replacement').toBeLessThan(Math.min(29_999, Math.max(999, lifetime / 100)) + 10_000);
          }
          const replacement: KeyModel = { id: key.id, name: old.name, secret: null, enabled: true, expiresAt: key.expiresAt, createdAt: key.createdAt, owner: old.owner };
          model.keys.push(replacement);
          if (createFault !== 'none') {
            // The answer, and the secret in it, were lost: svc names the key it made, and touches nothing else.
            expect(exitCode).toBe(1);
            return expectOrphanNamed(stderr, key, model, now, old);
          }
          replacement.secret = printedSecret(stdout, step.json);
          expect(hintOf(replacement.secret)).toBe(key.hint);
          if (holders.length > 0 && !step.save) {
            // Not saved: the old key is left working, and svc says how to save the new one.
            expect(exitCode).toBe(1);
            return expect(stderr).toContain(`svc login --profile ${holders[0]}`);
          }
          for (const p of holders) model.profiles[p].apiKey = replacement.secret;
          if (step.retire === 'overlap') {
            expect(exitCode).toBe(0);
            held.pending = { oldId: old.id, newId: key.id };
            return;
          }
          // The key in use is retired with its replacement, so a lost answer's retry is not refused.
          expect(exitCode).toBe(0);
          if (step.retire === 'disable-old') old.enabled = false;
          else kill(old);
        },
      };
    }

    case 'finish': {
      const pending = held.pending;
      const id = pending ? (step.cancel ? pending.newId : pending.oldId) : null;
      return {
        args: ['keys', 'rotate', step.cancel ? '--cancel' : '--finish'],
        env: keyEnv,
        rule: id === null ? undefined : rule('DELETE', id),
        settle({ exitCode }) {
          if (noKey) return expect(exitCode).toBe(3);
          if (!pending) return expect(exitCode).toBe(2);
          if (stopped(exitCode)) return;
          const target = model.keys.find((k) => k.id === id);
          // Never the key the profile uses: the profile would be left with a revoked key.
          if (step.actor === 'profile' && target?.secret === actorKey) return expect(exitCode).toBe(1);
          expect(exitCode).toBe(0);
          if (target) kill(target);
          delete held.pending;
        },
      };
    }
  }
}

/** One command of a sequence: a step, or several on distinct profiles run at once. */
export class StepsCommand implements fc.AsyncCommand<Model, World> {
  constructor(readonly steps: Step[]) {}
  check = () => true;
  run = (model: Model, world: World) => runSteps(model, world, this.steps);
  toString = () => this.steps.map(describeStep).join(' ‖ ');
}

/**
 * Runs one sequence in a fresh world (new user, workspace and bootstrap key;
 * the server's clock goes on) with an empty config dir, from the prelude.
 * `owned`: each profile touches only its own keys, and the prelude's
 * rounds run at once, as the sequence's batches do.
 */
export async function runSequence(
  server: { url: string; adminToken: string },
  run: Runner,
  owned: boolean,
  commands: Iterable<fc.AsyncCommand<Model, World>>,
): Promise<void> {
  const reset = await call(server.url, 'POST', '/_local/reset', server.adminToken);
  if (reset.status !== 200) throw new Error(`reset answered ${reset.status}: ${reset.text}`);
  const listed = await call(server.url, 'GET', '/api/service/user/api-keys', reset.json.apiKey);
  const world: World = {
    url: reset.json.url,
    adminToken: server.adminToken,
    bootstrap: reset.json.apiKey,
    bootstrapId: listed.json.keys[0].id,
    configDir: mkdtempSync(join(tmpdir(), 'svc-model-')),
    run,
  };
  try {
    const model = emptyModel(owned);
    for (const round of PRELUDE) {
      if (owned) await runSteps(model, world, round);
      else for (const step of round) await runSteps(model, world, [step]);
    }
    await fc.asyncModelRun(() => ({ model, real: world }), commands);
  } finally {
    rmSync(world.configDir, { recursive: true, force: true });
  }
}
