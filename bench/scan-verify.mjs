// `svc scan FILE --json` with verification, against the reference server:
// 500 distinct live keys spread over workspaces of several plans and users,
// plus disabled, expired, revoked and never-issued keys, all written into
// one file. What it shows is that verification is bounded by the rate
// limits (each workspace's ceiling a window), not by round trips made one
// after another: the run's requests come from the server's request log,
// the bound from each workspace's count of admitted requests and its
// ceiling, and the round trip from the bench's own sequential requests.
//
// The server's clock is moved so that the first rate window ends a few
// seconds after svc starts (POST /_local/clock): a workspace that needs a
// second window waits only those seconds, not up to a minute, and svc's
// wait follows the server's Retry-After. Every round starts with fresh
// windows and checks every key's state in the JSON.
//
//   node bench/scan-verify.mjs [--rounds N] [--first-window S] [--latency MS]…   (after npm run build; --bin measures another build's bin/svc.js)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent } from 'undici';
import { call, elapsedMs, machine, median, SVC_BIN, startSvcServer } from './lib.mjs';
import { fixed, hintOf, int, prng, spread, svcFindings, timedRun } from './scan-lib.mjs';
import { windowEndsIn } from '../test/helpers/reference-server.mjs';

const CEILING = { free: 30, starter: 120, creator: 300, pro: 1000 };

/**
 * The workspaces and what each holds. `own`: the profile's user's (its key
 * lists show them); the others belong to users svc has no key of. Live keys
 * add up to 500.
 */
export const LAYOUT = [
  { name: 'own, profile workspace', user: 'own', plan: 'pro', live: 25, disabled: 5, expired: 5, revoked: 5, profile: true },
  { name: 'own, free', user: 'own', plan: 'free', live: 45, disabled: 5, expired: 3, revoked: 5 },
  { name: 'own, starter', user: 'own', plan: 'starter', live: 150, disabled: 5, expired: 2, revoked: 5 },
  { name: 'own, pro', user: 'own', plan: 'pro', live: 200, disabled: 5, expired: 0, revoked: 5 },
  { name: 'other user A, free', user: 'a', plan: 'free', live: 40, disabled: 5, expired: 0, revoked: 5 },
  { name: 'other user B, starter', user: 'b', plan: 'starter', live: 40, disabled: 0, expired: 0, revoked: 5 },
];
const UNKNOWN_KEYS = 10;

/** What the JSON must say of a key of each kind. */
function expected(kind, own) {
  if (kind === 'live') return { state: 'live' };
  if (kind === 'disabled') return own ? { state: 'not-live', why: 'disabled' } : { state: 'not-live', why: 'refused' };
  if (kind === 'expired') return own ? { state: 'not-live', why: 'expired' } : { state: 'not-live', why: 'refused' };
  return { state: 'not-live', why: 'refused' };
}

/** Runs `fn` over `items`, `width` at a time. */
async function inBatches(items, width, fn) {
  const out = [];
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map(fn))));
  return out;
}

async function ok(res, what) {
  if (res.status >= 300) throw new Error(`${what} answered ${res.status}: ${res.text}`);
  return res.json;
}

/** Users, workspaces and keys as LAYOUT says. Everything is made on Pro plans (so making 600 keys meets no ceiling), then each workspace gets its plan. */
async function populate(server, random) {
  const users = {
    own: { id: server.userId, secret: server.apiKey, firstWorkspace: server.workspaceId },
  };
  for (const name of ['a', 'b']) {
    const made = await ok(await server.admin('POST', '/users', { name: `bench user ${name}`, plan: 'pro' }), 'POST /_local/users');
    users[name] = { id: made.user.id, secret: made.apiKey.secret, firstWorkspace: made.workspace.id };
  }
  const keys = [];
  const workspaces = [];
  const usedFirst = new Set();
  for (const ws of LAYOUT) {
    const user = users[ws.user];
    // Each user's first workspace (the one its key is anchored to) is used by the first LAYOUT entry of that user.
    let id;
    if (!usedFirst.has(ws.user)) {
      id = user.firstWorkspace;
      usedFirst.add(ws.user);
    } else {
      id = (await ok(await server.admin('POST', '/workspaces', { userId: user.id, name: ws.name, plan: 'pro' }), 'POST /_local/workspaces')).id;
    }
    await ok(await server.admin('PUT', `/users/${user.id}/active-workspace`, { workspaceId: id }), 'PUT active-workspace');
    const now = Date.parse((await server.admin('GET', '/clock')).json.now);
    const kinds = [
      ...Array(ws.live).fill('live'),
      ...Array(ws.disabled).fill('disabled'),
      ...Array(ws.expired).fill('expired'),
      ...Array(ws.revoked).fill('revoked'),
    ];
    const made = await inBatches(kinds, 25, async (kind, i) => {
      const body = { name: `${ws.name} ${kind} ${i}` };
      if (kind === 'expired') body.expiresAt = new Date(now + 90_000).toISOString();
      const record = await ok(await server.api('POST', '/user/api-keys', user.secret, body), 'POST /user/api-keys');
      return { kind, id: record.id, secret: record.secret, workspace: ws.name, own: ws.user === 'own' };
    });
    await inBatches(made, 25, async (key) => {
      if (key.kind === 'disabled') await ok(await server.api('PATCH', `/user/api-keys/${key.id}`, user.secret, { enabled: false }), 'PATCH');
      if (key.kind === 'revoked') await ok(await server.api('DELETE', `/user/api-keys/${key.id}`, user.secret), 'DELETE');
    });
    keys.push(...made);
    workspaces.push({ ...ws, id, ceiling: CEILING[ws.plan] });
    // A fresh window for the next workspace's keys, so no workspace's making comes near even a Pro ceiling.
    await server.admin('POST', '/clock', { advanceSeconds: 60 });
  }
  // Anchor the users' keys back where they were and give each workspace its plan.
  for (const user of Object.values(users)) await ok(await server.admin('PUT', `/users/${user.id}/active-workspace`, { workspaceId: user.firstWorkspace }), 'PUT active-workspace');
  for (const ws of workspaces) await ok(await server.admin('PATCH', `/workspaces/${ws.id}`, { plan: ws.plan }), 'PATCH /_local/workspaces');
  for (let i = 0; i < UNKNOWN_KEYS; i++) keys.push({ kind: 'unknown', id: null, secret: random.key(), workspace: null, own: false });
  return { users, workspaces, keys };
}

/** The file svc scans: every key on a line of its own, in an order of the seed's, among other text. */
function writeKeyFile(path, keys, random) {
  const order = keys.map((key, i) => ({ key, sort: random.next(), i }));
  order.sort((a, b) => a.sort - b.sort);
  const lines = ['# leaked keys collected for bench/scan-verify.mjs'];
  for (const { key, i } of order) lines.push(`export SVC_KEY_${i}=${key.secret}  # ${['deploy', 'ci', 'local', 'old'][i % 4]}`);
  writeFileSync(path, `${lines.join('\n')}\n`);
}

/** The round trip of one verification request, made one after another by the bench itself over one kept-alive connection. */
async function roundTrip(server, count) {
  const made = await ok(await server.admin('POST', '/users', { name: 'bench round trip', plan: 'pro' }), 'POST /_local/users');
  const dispatcher = new Agent({ connections: 1 });
  const times = [];
  try {
    await server.admin('POST', '/clock', { advanceSeconds: 60 });
    for (let i = 0; i < count + 5; i++) {
      const started = process.hrtime.bigint();
      const res = await call(server.url, 'GET', `/api/service/user/api-keys/${made.apiKey.id}`, made.apiKey.secret, undefined, { dispatcher });
      if (res.status !== 200) throw new Error(`round trip answered ${res.status}`);
      if (i >= 5) times.push(elapsedMs(started));
    }
  } finally {
    await dispatcher.close();
  }
  return median(times);
}

export async function benchScanVerify({ rounds = 3, firstWindowSeconds = 10, latencyMs = 0, seed = 20261204, bin = SVC_BIN, log = () => {} } = {}) {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-scan-verify-'));
  const server = await startSvcServer(['--plan', 'pro', ...(latencyMs > 0 ? ['--latency', String(latencyMs)] : [])]);
  try {
    const random = prng(seed);
    log(`scan-verify: latency ${latencyMs} ms: making users, workspaces and keys…`);
    const world = await populate(server, random);
    mkdirSync(join(dir, 'scanned'));
    const file = join(dir, 'scanned', 'leaked.env');
    writeKeyFile(file, world.keys, random);
    const rttMs = await roundTrip(server, 200);
    const env = { SVC_BASE_URL: server.url, SVC_API_KEY: world.users.own.secret, SVC_CONFIG_DIR: join(dir, 'config'), XDG_CACHE_HOME: join(dir, 'cache') };
    const svc = (args) => timedRun(process.execPath, [bin, 'scan', ...args, file, '--json'], { env, okCodes: [0, 1, 7, 8] });
    // Warm svc's code cache: start-up is the same either way, and not what this measures.
    await svc(['--no-verify']);
    const wsOf = new Map(world.workspaces.map((ws) => [ws.id, ws]));
    const samples = [];
    for (let round = 0; round < rounds; round++) {
      const noVerify = await svc(['--no-verify']);
      // Past the expiry of the expiring keys, into a fresh window, then to a window that ends firstWindowSeconds from now.
      await server.admin('POST', '/clock', { advanceSeconds: 120 });
      await windowEndsIn(server, firstWindowSeconds);
      const since = Date.parse((await server.admin('GET', '/clock')).json.now);
      const run = await svc([]);
      const logged = (await server.admin('GET', '/requests?limit=1000')).json.requests.filter((r) => Date.parse(r.at) >= since);
      const found = svcFindings(run.stdout);
      const byHint = new Map(found.keys.map((k) => [k.hint, k]));
      const wrong = [];
      for (const key of world.keys) {
        const want = expected(key.kind, key.own);
        const got = byHint.get(hintOf(key.secret));
        if (!got || got.state !== want.state || (want.why && got.why !== want.why)) wrong.push({ kind: key.kind, own: key.own, workspace: key.workspace, want, got: got ? { state: got.state, why: got.why } : null });
      }
      const perWorkspace = world.workspaces.map((ws) => {
        const mine = logged.filter((r) => r.workspaceId === ws.id);
        const admitted = mine.filter((r) => r.status !== 429).length;
        const windows = Math.max(1, Math.ceil(admitted / ws.ceiling));
        return { name: ws.name, plan: ws.plan, ceiling: ws.ceiling, admitted, limited: mine.filter((r) => r.status === 429).length, windows };
      });
      // Windows run at the same time in every workspace: a workspace needing n windows cannot finish before the first ends and n-2 more pass.
      const waitOf = (windows) => (windows < 2 ? 0 : firstWindowSeconds * 1000 + (windows - 2) * 60_000);
      const boundMs = Math.max(...perWorkspace.map((w) => waitOf(w.windows)));
      const sumMs = perWorkspace.reduce((s, w) => s + waitOf(w.windows), 0);
      const statuses = {};
      for (const r of logged) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      const sample = {
        ms: run.ms,
        noVerifyMs: noVerify.ms,
        exit: run.code,
        requests: logged.length,
        statuses,
        unattributed: logged.filter((r) => !wsOf.has(r.workspaceId) && r.status !== 401).length,
        perWorkspace,
        boundMs,
        sumMs,
        admitted: logged.filter((r) => r.status !== 429 && r.status !== 401).length,
        wrong,
        distinct: found.distinct,
        findings: found.findings,
      };
      // What the same requests cost one after another, without the ones a limit refused and without any wait.
      sample.sequentialMs = (sample.requests - (statuses[429] ?? 0)) * rttMs;
      samples.push(sample);
      log(`scan-verify: latency ${latencyMs} ms, round ${round + 1}: ${int(run.ms)} ms, ${sample.requests} requests (${JSON.stringify(statuses)}), bound ${int(boundMs)} ms, ${wrong.length} wrong states`);
    }
    return {
      rounds,
      firstWindowSeconds,
      latencyMs,
      rttMs,
      keys: {
        total: world.keys.length,
        byKind: world.keys.reduce((m, k) => ({ ...m, [k.kind]: (m[k.kind] ?? 0) + 1 }), {}),
      },
      workspaces: world.workspaces.map((ws) => ({ name: ws.name, plan: ws.plan, ceiling: ws.ceiling, live: ws.live, disabled: ws.disabled, expired: ws.expired, revoked: ws.revoked })),
      ms: spread(samples.map((s) => s.ms)),
      noVerifyMs: spread(samples.map((s) => s.noVerifyMs)),
      samples,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The section of bench/RESULTS.md, for the runs of benchScanVerify (one per server latency). */
export function scanVerifyReport(results) {
  const r0 = results[0];
  const k = r0.keys.byKind;
  const lines = [
    `One reference server (\`svc serve --local\`, a child process) per case; through its admin API and the service API, ${r0.workspaces.length} workspaces of three users, each made on a Pro plan and then given its own: ${k.live} live keys, ${k.disabled} disabled, ${k.expired} expired (made with an expiry 90 s ahead, then the server's clock moved past it), ${k.revoked} revoked and ${k.unknown} well-formed keys never issued, ${r0.keys.total} in all, one to a line of one file in a seeded order. svc runs with the profile user's key in SVC_API_KEY and the server in SVC_BASE_URL, in the minimal environment of bench/lib.mjs: \`svc scan FILE --json\` (found keys checked through the user's own key lists, then with each found key itself). Before each round the server's clock moves 120 s on (fresh windows) and then to ${r0.firstWindowSeconds} s before the end of its window, so that a workspace that needs a second window waits ${r0.firstWindowSeconds} s, not up to a minute; svc's wait follows the server's Retry-After. Requests are the server's request log from the moment svc started; a workspace's admitted requests are its entries not answered 429. The round trip is the median of 200 \`GET /user/api-keys/{id}\` the bench sent one after another on one kept-alive connection. The second case starts the server with \`--latency\`, every API request delayed, as a distant service's would be.`,
    '',
    `The rate-limit bound is the longest any one workspace must wait: ${r0.firstWindowSeconds} s for the first window to end, plus 60 s for each further window it needs (windows of different workspaces pass at the same time; waiting out each workspace's in turn is the "in turn" figure). "N × round trip" is the run's requests that were not refused (429), one after another with no wait at all.`,
    '',
  ];
  for (const r of results) lines.push(...caseReport(r));
  return lines;
}

function caseReport(r) {
  const last = r.samples[r.samples.length - 1];
  const wrong = r.samples.reduce((n, s) => n + s.wrong.length, 0);
  return [
    `### ${r.latencyMs > 0 ? `Server latency ${r.latencyMs} ms (\`--latency ${r.latencyMs}\`)` : 'No added latency'}`,
    '',
    '| workspace | plan (a minute) | live | disabled | expired | revoked | admitted | 429 | windows needed |',
    '|---|---|---|---|---|---|---|---|---|',
    ...r.workspaces.map((ws, i) => {
      const w = last.perWorkspace[i];
      return `| ${ws.name} | ${ws.plan} (${int(ws.ceiling)}) | ${ws.live} | ${ws.disabled} | ${ws.expired} | ${ws.revoked} | ${w.admitted} | ${w.limited} | ${w.windows} |`;
    }),
    '',
    `(Admitted and 429 counts from round ${r.samples.length}; admitted/429 per workspace in every round: ${r.samples.map((s) => s.perWorkspace.map((w) => `${w.admitted}/${w.limited}`).join(' ')).join('; ')}.)`,
    '',
    '| round | `svc scan … --json`, verifying | `--no-verify` | requests (by status) | rate-limit bound | in turn | N × round trip | keys in a wrong state |',
    '|---|---|---|---|---|---|---|---|',
    ...r.samples.map(
      (s, i) =>
        `| ${i + 1} | ${int(s.ms)} ms | ${int(s.noVerifyMs)} ms | ${s.requests} (${Object.entries(s.statuses)
          .map(([status, n]) => `${n} × ${status}`)
          .join(', ')}) | ${int(s.boundMs)} ms | ${int(s.sumMs)} ms | ${int(s.sequentialMs)} ms | ${s.wrong.length} |`,
    ),
    '',
    `Median of ${r.rounds}: ${int(r.ms.median)} ms with verification (IQR ${int(r.ms.low)}–${int(r.ms.high)} ms), ${int(r.noVerifyMs.median)} ms without. Round trip ${fixed(r.rttMs, 2)} ms.`,
    '',
    `States: ${wrong === 0 ? `every key's state was right in every round (${r.keys.total} keys: live; disabled and expired keys of the profile's user named so; the other users' disabled keys, revoked and never-issued keys "refused")` : `**${wrong} keys in a wrong state**: ${JSON.stringify(r.samples.flatMap((s) => s.wrong).slice(0, 5))}`}. svc reported ${last.distinct} distinct keys in ${last.findings} places, exit ${last.exit}.`,
    '',
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { bin: { type: 'string' }, rounds: { type: 'string', default: '3' }, 'first-window': { type: 'string', default: '10' }, latency: { type: 'string', multiple: true, default: ['0', '50'] } },
  });
  const env = machine();
  const result = [];
  for (const latency of values.latency) {
    result.push(
      await benchScanVerify({
        rounds: Number(values.rounds),
        firstWindowSeconds: Number(values['first-window']),
        latencyMs: Number(latency),
        log: (l) => process.stderr.write(`${l}\n`),
        ...(values.bin ? { bin: values.bin } : {}),
      }),
    );
  }
  process.stdout.write(`machine: ${env.cpu} × ${env.cores}, ${env.node}, load ${env.loadAverage} → ${machine().loadAverage}\n\n`);
  process.stdout.write(`${scanVerifyReport(result).join('\n')}\n`);
  writeFileSync(join(tmpdir(), 'svc-bench-scan-verify.json'), JSON.stringify(result, null, 2));
}
