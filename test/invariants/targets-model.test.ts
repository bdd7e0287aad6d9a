// tier: in-process
/**
 * Issue 36, as a property: whatever the server's shape (how it writes
 * hints, or none; how it pages, including empty pages, loops and pages svc
 * cannot follow; answers lost after the work was done; a 100 or 103 before
 * every answer) and whatever
 * destructive command a person runs, svc changes only the keys the command
 * named, never revokes the key in use unless it was named with --yes, and
 * never claims a list it did not read whole.
 *
 * Each run starts a server written from the spec (test/helpers/spec-server)
 * with random keys, runs one random command in-process, and compares the
 * server's keys before and after with what the command named, judged on
 * the server's own state, not on anything svc printed.
 *
 * fast-check prints the seed and the smallest failing case it found;
 * SVC_MODEL_SEED=<n> runs that seed again.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { svc, tempConfigDir } from '../helpers/in-process.js';
import { modelSeed } from '../helpers/key-model.js';
import { scriptedPrompter } from '../helpers/prompter.js';
import { records, startSpecServer, type AnswerRule, type SpecKey, type Variation } from '../helpers/spec-server.js';

const RUNS = 120;
const seed = modelSeed();
const DAY = 86_400_000;
const config = tempConfigDir();

type HintForm = 'own' | 'dots' | 'mask' | 'none' | 'swapped';
const HINT: Record<HintForm, (secret: string) => string | undefined> = {
  own: (s) => `sk_${s.slice(3, 7)}\u2026${s.slice(-4)}`,
  /** svc's form, written from other characters: no listed hint is the key in use's. */
  swapped: (s) => `sk_${s.slice(-4)}\u2026${s.slice(3, 7)}`,
  dots: (s) => `sk_${s.slice(3, 7)}...${s.slice(-4)}`,
  mask: (s) => `****${s.slice(-4)}`,
  none: () => undefined,
};

type Paging = NonNullable<Variation['pages']>['style'] | 'one-page';
const PAGING: Paging[] = ['one-page', 'cursor', 'empty-pages', 'has-more', 'link', 'links-next', 'token', 'total-only', 'cursor-loop', 'foreign-link'];
/** Styles svc follows to the end, whatever the number of keys. */
const WHOLE = new Set<Paging>(['one-page', 'cursor', 'empty-pages', 'has-more', 'link', 'links-next']);

interface KeySpec {
  name: string;
  state: 'enabled' | 'disabled' | 'expired';
  /** Created a month ago (and never used since, where the server reports no use). */
  old: boolean;
}

interface Shape {
  hint: HintForm;
  paging: Paging;
  pageSize: number;
  /** The server reports each key's last use (the key in use: just now). */
  reportsUse: boolean;
  keys: KeySpec[];
  /** The key in use was made a month ago too. */
  inUseOld: boolean;
  /** The first DELETE or PATCH does its work, then its answer is lost. */
  loseFirst: 'DELETE' | 'PATCH' | null;
  interim: Variation['interim'] | null;
  /** The list says the key in use is disabled or expired, though it just read that list. */
  inUseShownAs: 'disabled' | 'expired' | null;
}

/** How the command names its keys: a listed key by index (0 is the key in use), its name, or an id no key has. */
type Ref = { by: 'id'; index: number } | { by: 'name'; index: number } | { by: 'unknown' };

type Command =
  | { kind: 'revoke' | 'rotate'; ref: Ref; yes: boolean }
  | { kind: 'disable' | 'enable'; ref: Ref }
  | { kind: 'prune'; criterion: '--disabled' | '--expired' | '--unused-for' }
  | { kind: 'list' }
  /** The interactive manager's revoke: the key found by typing its name, then yes. */
  | { kind: 'manager-revoke'; index: number };

const shape: fc.Arbitrary<Shape> = fc.record({
  hint: fc.constantFrom<HintForm>('own', 'dots', 'mask', 'none', 'swapped'),
  paging: fc.constantFrom(...PAGING),
  pageSize: fc.integer({ min: 1, max: 3 }),
  reportsUse: fc.boolean(),
  keys: fc.array(
    fc.record({
      name: fc.constantFrom('ci', 'laptop', 'dup', 'bootstrap', ' deploy '),
      state: fc.constantFrom<KeySpec['state']>('enabled', 'enabled', 'disabled', 'expired'),
      old: fc.boolean(),
    }),
    { minLength: 1, maxLength: 6 },
  ),
  inUseOld: fc.boolean(),
  loseFirst: fc.constantFrom<Shape['loseFirst']>(null, null, 'DELETE', 'PATCH'),
  interim: fc.constantFrom<Shape['interim']>(null, null, 100, 103),
  inUseShownAs: fc.constantFrom<Shape['inUseShownAs']>(null, null, null, 'disabled', 'expired'),
});

const ref: fc.Arbitrary<Ref> = fc.oneof(
  fc.record({ by: fc.constant('id' as const), index: fc.nat(6) }),
  fc.record({ by: fc.constant('name' as const), index: fc.nat(6) }),
  fc.constant({ by: 'unknown' as const }),
);

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ kind: fc.constantFrom('revoke' as const, 'rotate' as const), ref, yes: fc.boolean() }),
  fc.record({ kind: fc.constantFrom('disable' as const, 'enable' as const), ref }),
  fc.record({ kind: fc.constant('prune' as const), criterion: fc.constantFrom('--disabled' as const, '--expired' as const, '--unused-for' as const) }),
  fc.constant({ kind: 'list' as const }),
  fc.record({ kind: fc.constant('manager-revoke' as const), index: fc.nat(6) }),
);

interface Snapshot {
  id: string;
  name: string;
  enabled: boolean;
}

const snapshot = (keys: Map<string, SpecKey>): Snapshot[] => [...keys.values()].map((k) => ({ id: k.id, name: k.name, enabled: k.enabled }));

/** What a reference names on the server as it is: an id names its key; a name names the one key that has it, trimmed, or none. */
function named(keys: readonly SpecKey[], arg: string): string[] {
  if (keys.some((k) => k.id === arg)) return [arg];
  const same = keys.filter((k) => k.name.trim() === arg);
  return same.length === 1 ? [same[0]!.id] : [];
}

async function runOne(shape: Shape, c: Command): Promise<void> {
  // A list that calls the key in use disabled or expired, with no hint that shows it is that key, is a server
  // svc cannot tell from one whose key is what it says (docs/contract.md §C2): such a lie comes with svc's hints only.
  const s = shape.hint === 'own' ? shape : { ...shape, inUseShownAs: null };
  const now = Date.now();
  const variation: Variation = {
    record: (k, nowMs) => {
      const record = { ...records.full(k, nowMs) } as Record<string, unknown>;
      const hint = HINT[s.hint](k.secret);
      if (hint === undefined) delete record.hint;
      else record.hint = hint;
      if (!s.reportsUse) record.lastUsedAt = null;
      if (k.secret === server.apiKey && s.inUseShownAs === 'disabled') Object.assign(record, { enabled: false, status: 'disabled' });
      if (k.secret === server.apiKey && s.inUseShownAs === 'expired') Object.assign(record, { status: 'expired', expiresAt: new Date(nowMs - DAY).toISOString() });
      return record;
    },
    ...(s.paging === 'one-page' ? {} : { pages: { size: s.pageSize, style: s.paging } }),
    ...(s.interim === null ? {} : { interim: s.interim }),
  };
  const server = await startSpecServer(variation);
  try {
    const inUse = [...server.keys.values()][0]!;
    if (s.inUseOld) inUse.createdAt = now - 30 * DAY;
    for (const spec of s.keys) {
      const key = server.addKey(spec.name);
      if (spec.old) key.createdAt = now - 30 * DAY;
      if (spec.state === 'disabled') key.enabled = false;
      if (spec.state === 'expired') key.expiresAt = now - DAY;
    }
    const all = [...server.keys.values()];
    const arg = (r: Ref) => (r.by === 'unknown' ? 'key_nobodyhasthis' : r.by === 'id' ? all[r.index % all.length]!.id : all[r.index % all.length]!.name.trim());

    const args: string[] = c.kind === 'manager-revoke' ? [] : ['keys', c.kind];
    let allowed: Set<string>;
    // The key in use may go only when the command named it and, where it revokes, said --yes.
    let inUseMayGo = false;
    if (c.kind === 'revoke' || c.kind === 'rotate' || c.kind === 'disable' || c.kind === 'enable') {
      const given = arg(c.ref);
      args.push(given);
      if ('yes' in c && c.yes) args.push('--yes');
      allowed = new Set(named(all, given));
      // disable has no --yes: naming the key is enough, and svc warns after.
      inUseMayGo = allowed.has(inUse.id) && (!('yes' in c) || c.yes);
    } else if (c.kind === 'prune') {
      args.push(...(c.criterion === '--unused-for' ? ['--unused-for', '7d'] : [c.criterion]), '--yes', '--json');
      const matches = (k: SpecKey) =>
        c.criterion === '--disabled'
          ? !k.enabled
          : c.criterion === '--expired'
            ? k.expiresAt !== null && k.expiresAt <= Date.now()
            : (s.reportsUse && k === inUse ? Date.now() : k.createdAt) <= Date.now() - 7 * DAY;
      allowed = new Set(all.filter((k) => k !== inUse && matches(k)).map((k) => k.id));
    } else if (c.kind === 'list') {
      args.push('--json');
      allowed = new Set();
    } else {
      // Known once the person picked: the key under the cursor when Enter came (below).
      allowed = new Set();
    }
    if (s.loseFirst !== null) server.rules.push({ method: s.loseFirst, times: 1, then: 'drop' } satisfies AnswerRule);

    const before = snapshot(server.keys);
    const picked = c.kind === 'manager-revoke' ? all[c.index % all.length]! : null;
    const prompter = scriptedPrompter(picked === null ? [] : [{ menu: 'Revoke a key' }, { pickMany: [picked.name.trim()] }, { confirm: true }]);
    // Where svc cannot follow the pages, the list is still whole when the keys fit before the first page it cannot follow.
    const whole = WHOLE.has(s.paging) || before.length <= s.pageSize || (s.paging === 'cursor-loop' && before.length <= 2 * s.pageSize);
    const env = { SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey, SVC_CONFIG_DIR: config.dir };
    const result = await svc(args, env, picked === null ? {} : { tty: true, columns: 120, rows: 60, deps: { prompter } });
    if (picked !== null) {
      // The one key acted on is the one the list answered with; the key in use among them only once picked and confirmed.
      const chosen = prompter.chosen as { id: string; hint: string | null; enabled: boolean | null }[];
      allowed = new Set(chosen.map((k) => k.id));
      inUseMayGo = allowed.has(inUse.id);
      const asked = result.stderr;
      for (const key of chosen.filter((k) => k.enabled !== false)) {
        // As the list showed it: the key in use as the lie says.
        const expired = key.id === inUse.id ? s.inUseShownAs === 'expired' : (all.find((k) => k.id === key.id)?.expiresAt ?? Infinity) <= Date.now();
        if (key.id === inUse.id && s.hint === 'own') expect(asked, 'no lock-out warning before the question').toContain('This is the key svc is using');
        else if (s.hint !== 'own' && !expired) expect(asked, 'no "cannot tell" before the question').toContain('svc cannot tell whether');
      }
    }
    const after = new Map(snapshot(server.keys).map((k) => [k.id, k]));
    const context = `${args.join(' ')} → exit ${result.exitCode}\n${result.stderr}`;

    // Only what was named changed: every key that went, or was switched, is in the named set.
    const changed = before.filter((k) => !after.has(k.id) || after.get(k.id)!.enabled !== k.enabled).map((k) => k.id);
    for (const id of changed) expect(allowed.has(id), `${id} changed, not named: ${context}`).toBe(true);
    // The key in use stays unless named with --yes.
    if (!inUseMayGo) expect(after.has(inUse.id) && after.get(inUse.id)!.enabled, `the key in use went: ${context}`).toBe(true);
    // A list svc can read whole is read, interim answers or not; one not read whole is never passed off as the whole list.
    if (c.kind === 'list' && whole) expect(result.exitCode, context).toBe(0);
    if (c.kind === 'list' && result.exitCode === 0) {
      expect(whole, context).toBe(true);
      expect(JSON.parse(result.stdout).keys).toHaveLength(before.length);
    }
    if (c.kind === 'prune' && result.exitCode === 0) {
      expect(whole, context).toBe(true);
      // Nothing left that svc could tell was not the key in use, yet matched.
      const tellable = (id: string) => s.hint === 'own' || server.keys.get(id)?.enabled === false || (server.keys.get(id)?.expiresAt ?? Infinity) <= Date.now();
      expect([...allowed].filter((id) => after.has(id) && tellable(id)), context).toEqual([]);
    }
    // A success printed is a change that landed: each "Revoked <id>" names a key that is gone.
    for (const [, id] of result.stderr.matchAll(/Revoked (?:'[^']*' \()?([0-9a-f]{16})/g)) expect(after.has(id!), context).toBe(false);
  } finally {
    await server.close();
  }
}

it(`${RUNS} random server shapes × random destructive commands change only the keys named`, async () => {
  console.info(`targets model: seed ${seed}; replay it with SVC_MODEL_SEED=${seed} npx vitest run test/invariants/targets-model.test.ts`);
  await fc.assert(
    fc.asyncProperty(shape, command, (s, c) => runOne(s, c)),
    { seed, numRuns: RUNS },
  );
}, 120_000);
