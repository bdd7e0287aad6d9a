// The server with 100,000 keys over 1,000 users, against one with 2,000:
// load time, resident memory, listing a user's 1,000 keys, authentication
// cost, and how long a create waits for the state file.
//
// The state is written straight in the version 1 --data file format
// (src/server/snapshot.ts), which the server still reads and migrates on its
// first start: minting 100,000 keys through the API would take longer than
// the whole benchmark may, and loading the file is itself one of the things
// measured.
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import autocannon from 'autocannon';
import { BASE36, BASE62, symbols } from '../test/helpers/many-keys.mjs';
import { elapsedMs, median, memoryOf, quantile, startSvcServer } from './lib.mjs';


/**
 * A state file of `users` users, each with a Pro workspace of its own. The
 * first user holds `bigUserKeys` keys, the others share the rest evenly.
 * Returns the file and, per user, one secret (for authentication), plus the
 * first user's id and secret.
 */
export function writeState(path, { users, keys, bigUserKeys }) {
  const start = Date.parse('2026-01-01T00:00:00.000Z');
  const snapshot = { format: 'svc-local-state', version: 1, users: [], workspaces: [], keys: [] };
  const secrets = [];
  const rest = keys - bigUserKeys;
  let minted = 0;
  for (let u = 0; u < users; u++) {
    const userId = `usr_${symbols(BASE36, 20)}`;
    const workspaceId = `ws_${symbols(BASE36, 20)}`;
    snapshot.users.push({ id: userId, name: `user ${u}`, activeWorkspaceId: workspaceId, workspaceIds: [workspaceId] });
    snapshot.workspaces.push({ id: workspaceId, name: 'Personal', plan: 'pro' });
    const count = u === 0 ? bigUserKeys : Math.floor(rest / (users - 1)) + (u - 1 < rest % (users - 1) ? 1 : 0);
    for (let k = 0; k < count; k++) {
      const secret = `sk_${symbols(BASE62, 64)}`;
      if (k === 0) secrets.push(secret);
      snapshot.keys.push({
        id: `key_${symbols(BASE36, 20)}`,
        userId,
        workspaceId,
        name: `key ${k}`,
        hash: createHash('sha256').update(secret).digest('hex'),
        hint: `sk_${secret.slice(3, 7)}\u2026${secret.slice(-4)}`,
        enabled: true,
        createdAt: new Date(start + minted++).toISOString(),
        expiresAt: null,
        lastUsedAt: null,
      });
    }
  }
  if (minted !== keys) throw new Error(`minted ${minted} keys, not ${keys}`);
  writeFileSync(path, `${JSON.stringify(snapshot, null, 2)}\n`, { mode: 0o600 });
  return { secrets, bigUser: { id: snapshot.users[0].id, secret: secrets[0] } };
}

async function timedCalls(count, fn) {
  const times = [];
  for (let i = 0; i < count; i++) {
    const started = process.hrtime.bigint();
    await fn(i);
    times.push(elapsedMs(started));
  }
  return { p50: median(times), p99: quantile(times, 0.99), max: Math.max(...times) };
}

/** Authentication plus the cheapest handler (GET /workspace), spread over every user's workspace so none is limited. */
function authLoad(url, secrets, seconds) {
  const requests = secrets.map((secret) => ({
    method: 'GET',
    path: '/api/service/workspace',
    headers: { authorization: `Bearer ${secret}` },
  }));
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: 10, duration: seconds, requests }, (error, result) => {
      if (error) return reject(error);
      const non200 = result.requests.total - (result.statusCodeStats?.['200']?.count ?? 0);
      if (non200 > 0 || result.errors > 0) reject(new Error(`authentication load: ${non200} answers not 200 (${JSON.stringify(result.statusCodeStats)}), ${result.errors} errors`));
      else resolve({ rps: result.requests.average });
    });
  });
}

/** Whether the file is the compact snapshot the server writes, not the version 1 document writeState writes. */
const isCompact = (file) => readFileSync(file).subarray(0, 8).toString('latin1') === 'SVCSNAP\n';
const journalFiles = (file) => readdirSync(dirname(file)).filter((name) => name.startsWith(`${basename(file)}.journal.`));

/**
 * A store written to `dir` and served by `bin`, ready for measuring. The
 * file is written as a version 1 document; the first start migrates it (a
 * compaction after the ready line), and that start's time is kept apart:
 * start-up is measured on the second start, from the compact snapshot, as
 * every start after the first one is.
 */
async function openStore(dir, name, shape, bin) {
  const file = join(dir, `${name}.json`);
  const { secrets, bigUser } = writeState(file, shape);
  const v1MiB = statSync(file).size / 1024 ** 2;
  const first = await startSvcServer(['--data', file], { bin });
  // A build from before the compact snapshot never migrates: its file stays as written, and this gives up.
  const deadline = Date.now() + 30_000;
  while (!(isCompact(file) && journalFiles(file).length === 0) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await first.stop();
  const server = await startSvcServer(['--data', file], { bin });
  return {
    name,
    shape,
    secrets,
    bigUser,
    server,
    v1MiB,
    firstStartMs: first.startMs,
    fileMiB: statSync(file).size / 1024 ** 2,
    loaded: memoryOf(server.pid),
  };
}

const authenticate = async (store, i) => {
  const res = await store.server.api('GET', '/workspace', store.secrets[i % store.secrets.length]);
  if (res.status !== 200) throw new Error(`authentication answered ${res.status}`);
};

/**
 * Authentication latency of two stores, one request at a time, timed here
 * to the microsecond (autocannon rounds to whole milliseconds). The two
 * servers take turns, request by request, so a change in the machine's
 * speed falls on both alike.
 */
async function pairedAuthLatency(a, b, pairs) {
  const times = [[], []];
  for (let i = 0; i < pairs; i++) {
    const order = i % 2 === 0 ? [0, 1] : [1, 0];
    for (const side of order) {
      const started = process.hrtime.bigint();
      await authenticate(side === 0 ? a : b, i);
      times[side].push(elapsedMs(started));
    }
  }
  return times.map((t) => ({ p50: median(t), p99: quantile(t, 0.99) }));
}

/**
 * Authentication throughput of each store, in rounds whose order reverses
 * each time (A B, B A, ...) so that the machine's drift falls on all alike.
 */
async function authThroughput(stores, rounds, seconds) {
  const rps = stores.map(() => []);
  for (const store of stores) await authLoad(store.server.url, store.secrets, 1);
  for (let round = 0; round < rounds; round++) {
    const order = stores.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) {
      await stores[i].server.startOfNextWindow();
      rps[i].push((await authLoad(stores[i].server.url, stores[i].secrets, seconds)).rps);
    }
  }
  return rps.map((list) => ({ rps: list.reduce((sum, r) => sum + r, 0) / list.length }));
}

async function measureStore(store, { listCalls, creates }) {
  const { server, secrets, bigUser, shape } = store;
  const list = await timedCalls(listCalls, async () => {
    const res = await server.api('GET', '/user/api-keys', bigUser.secret);
    if (res.status !== 200 || res.json.keys.length !== shape.bigUserKeys) throw new Error(`list answered ${res.status}`);
  });
  const create = await timedCalls(creates, async (i) => {
    // Spread over users so the creates never meet the rate limit.
    const res = await server.api('POST', '/user/api-keys', secrets[1 + i], { name: `bench-create-${i}` });
    if (res.status !== 201) throw new Error(`create answered ${res.status}`);
  });
  return {
    name: store.name,
    keys: shape.keys,
    users: shape.users,
    fileMiB: store.fileMiB,
    v1MiB: store.v1MiB,
    firstStartMs: store.firstStartMs,
    startMs: server.startMs,
    rssMiB: store.loaded?.rssMiB ?? null,
    peakMiB: memoryOf(server.pid)?.peakMiB ?? null,
    listCalls,
    list,
    creates,
    create,
  };
}

const SMALL = { users: 1_000, keys: 2_000, bigUserKeys: 1_000 };
const LARGE = { users: 1_000, keys: 100_000, bigUserKeys: 1_000 };

/**
 * Both stores with the first of `builds` (the current one); with more
 * builds (--before), the large store again with each of the others.
 */
export async function benchScale({ authSeconds, authRounds, authPairs, listCalls, creates, builds }) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-scale-'));
  const open = [];
  try {
    const options = { listCalls, creates };
    const [current, ...others] = builds;
    const small = await openStore(dir, 'small', SMALL, current.bin);
    open.push(small);
    const large = await openStore(dir, 'large', LARGE, current.bin);
    open.push(large);
    const [smallAuth, largeAuth] = await pairedAuthLatency(small, large, authPairs);
    const [smallRps, largeRps] = await authThroughput([small, large], authRounds, authSeconds);
    const results = {
      authPairs,
      authRounds,
      small: { ...(await measureStore(small, options)), authLatency: smallAuth, auth: smallRps },
      large: { ...(await measureStore(large, options)), authLatency: largeAuth, auth: largeRps },
      others: [],
    };
    for (const store of open.splice(0)) await store.server.stop();
    for (const [i, build] of others.entries()) {
      const store = await openStore(dir, `large-${i}`, LARGE, build.bin);
      open.push(store);
      const [auth] = await authThroughput([store], authRounds, authSeconds);
      results.others.push({ label: build.label, ...(await measureStore(store, options)), auth });
    }
    return results;
  } finally {
    for (const store of open) await store.server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
