// Server throughput on the 200, 429 and 401 paths of GET /user/api-keys,
// each against a bare node:http server answering the same status and body.
//
// The 200 path has to get past the rate limiter: one Pro workspace admits
// 1,000 requests a minute, a few hundredths of a second at full speed. So
// the load is spread over many users, each with a Pro workspace of its own,
// created through the admin API; every request carries the next user's key
// in turn, and each run starts in a fresh window (the server's clock is
// moved to it). Enough users are made that none comes near its ceiling,
// and a run fails if a single answer is anything but 200. The limiter
// still counts every request: this is the real 200 path, just never refused.
import autocannon from 'autocannon';
import { cpuMsOf, median, quantile, startBareServer, startSvcServer } from './lib.mjs';

const LIST = '/user/api-keys';
const PATH = `/api/service${LIST}`;
export const CONNECTIONS = 50;
const UNKNOWN_KEY = `sk_${'0'.repeat(64)}`;

/**
 * A run of autocannon, with every answer's latency in `latencies` when given. autocannon's own
 * percentiles come from a histogram of whole milliseconds, each latency cut down to the one
 * below: at these latencies, a p99 of "9" is anything from 9 to 10 ms, and a median of two runs
 * such figures can say "met" of a true median of 10.05 ms. The same response event carries the
 * latency as measured, to the microsecond.
 */
function load(url, requests, seconds, latencies) {
  return new Promise((resolve, reject) => {
    const instance = autocannon({ url, connections: CONNECTIONS, pipelining: 1, duration: seconds, requests }, (error, result) => {
      if (error) reject(error);
      else resolve(result);
    });
    if (latencies) instance.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
  });
}

/**
 * A warm-up, then a measured run whose answers must all have `status`; with
 * the server's CPU time per answer (user and system, all its threads): what
 * the server itself spent, where requests per second also count what the
 * load generator, sharing the machine, spent on it.
 */
async function measure(url, pid, requests, status, seconds) {
  await load(url, requests, 1);
  const latencies = [];
  const cpuBefore = cpuMsOf(pid);
  const result = await load(url, requests, seconds, latencies);
  const cpuAfter = cpuMsOf(pid);
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count]));
  const wrong = Object.keys(statuses).filter((code) => Number(code) !== status);
  if (wrong.length > 0 || result.errors + result.timeouts > 0) {
    throw new Error(`expected only ${status} from ${url}, got ${JSON.stringify(statuses)}, ${result.errors} errors, ${result.timeouts} timeouts`);
  }
  const cpuUs = cpuBefore === null || cpuAfter === null ? null : ((cpuAfter - cpuBefore) * 1000) / result.requests.total;
  return { rps: result.requests.average, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), total: result.requests.total, cpuUs };
}

/** One svc server with its users and the three request sets. */
async function prepareSvc(label, bin, users) {
  const server = await startSvcServer(['--plan', 'pro'], { bin });
  const keys = [];
  for (let i = 0; i < users; i++) {
    keys.push((await server.admin('POST', '/users', { name: `bench-${i}`, plan: 'pro' })).json.apiKey.secret);
  }
  const free = (await server.admin('POST', '/users', { name: 'bench-free', plan: 'free' })).json.apiKey.secret;
  const get = (key) => ({ method: 'GET', path: PATH, headers: { authorization: `Bearer ${key}` } });
  // Run at the start of a fresh window: exhausts the free workspace, which then stays exhausted for the run.
  const exhaust = async () => {
    for (let i = 0; i < 30; i++) await server.api('GET', LIST, free);
  };
  await server.startOfNextWindow();
  await exhaust();
  return {
    label,
    server,
    paths: [
      { requests: keys.map(get), body: (await server.api('GET', LIST, keys[0])).text },
      { requests: [get(free)], body: (await server.api('GET', LIST, free)).text, prepare: exhaust },
      { requests: [get(UNKNOWN_KEY)], body: (await server.api('GET', LIST, UNKNOWN_KEY)).text },
    ],
  };
}

const PATHS = [
  { name: '200 list own keys', status: 200 },
  { name: '429 exhausted Free', status: 429 },
  { name: '401 unknown key', status: 401 },
];

/**
 * `builds` are the svc builds to measure, `[{ label, bin }]`: normally the
 * current one, and with `--before` also an older one, measured in the same
 * run so both meet the same machine.
 */
export async function benchThroughput({ seconds, rounds, users, builds }) {
  const targets = [];
  try {
    for (const { label, bin } of builds) targets.push(await prepareSvc(label, bin, users));
    const results = [];
    for (const [p, path] of PATHS.entries()) {
      // The bare server answers what the current build answers on this path.
      const bare = await startBareServer(path.status, targets[0].paths[p].body);
      const runs = { bare: [], ...Object.fromEntries(targets.map((t) => [t.label, []])) };
      try {
        for (let round = 0; round < rounds; round++) {
          // The order rotates each round, so a machine that speeds up or slows down during the run favours nobody.
          const order = ['bare', ...targets.map((t) => t.label)];
          for (let i = 0; i < round % order.length; i++) order.push(order.shift());
          for (const which of order) {
            if (which === 'bare') {
              runs.bare.push(await measure(bare.url, bare.pid, targets[0].paths[p].requests, path.status, seconds));
              continue;
            }
            const target = targets.find((t) => t.label === which);
            await target.server.startOfNextWindow();
            await target.paths[p].prepare?.();
            runs[which].push(await measure(target.server.url, target.server.pid, target.paths[p].requests, path.status, seconds));
          }
        }
      } finally {
        await bare.stop();
      }
      results.push({ ...path, bodyBytes: Buffer.byteLength(targets[0].paths[p].body), runs });
    }
    for (const target of targets) {
      if (target.server.stderr()) throw new Error(`${target.label} wrote to stderr during the run: ${target.server.stderr()}`);
    }
    return results.map(({ runs, ...path }) => {
      const summary = (list) => ({
        rps: median(list.map((r) => r.rps)),
        p50: median(list.map((r) => r.p50)),
        p99: median(list.map((r) => r.p99)),
        worstP99: Math.max(...list.map((r) => r.p99)),
        eachP99: list.map((r) => r.p99),
        cpuUs: list.some((r) => r.cpuUs === null) ? null : median(list.map((r) => r.cpuUs)),
        requests: list.reduce((sum, r) => sum + r.total, 0),
      });
      // Each round's run beside the bare server's run of the same round: the machine drifts from
      // minute to minute by more than the difference being measured, and a pair shares its minute.
      const paired = (list, of) => {
        const ratios = list.map((r, round) => of(r, runs.bare[round]));
        return { median: median(ratios), low: quantile(ratios, 0.25), high: quantile(ratios, 0.75) };
      };
      return {
        ...path,
        bare: summary(runs.bare),
        builds: targets.map((t) => ({
          label: t.label,
          ...summary(runs[t.label]),
          ratio: paired(runs[t.label], (r, bare) => r.rps / bare.rps),
          cpuRatio: [...runs[t.label], ...runs.bare].some((r) => r.cpuUs === null) ? null : paired(runs[t.label], (r, bare) => r.cpuUs / bare.cpuUs),
        })),
      };
    });
  } finally {
    for (const target of targets) await target.server.stop();
  }
}
