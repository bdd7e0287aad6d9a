// Instructions the server's main thread runs per request, counted by
// callgrind: unlike requests per second, the count does not move with the
// load of a shared machine. The server runs under valgrind; 2,000 requests
// warm it up, the counters are zeroed, N more are sent and counted.
//
//   node bench/request-instructions.mjs [200|429|401] [--bin path/to/bin/svc.js] [--bare] [-n 2000]
//
// Needs valgrind (callgrind_control comes with it) and a built dist/.
import autocannon from 'autocannon';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { call, SVC_BIN } from './lib.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { bin: { type: 'string', default: SVC_BIN }, bare: { type: 'boolean', default: false }, n: { type: 'string', short: 'n', default: '2000' } },
});
const which = positionals[0] ?? '200';
const count = Number(values.n);
const PATH = '/api/service/user/api-keys';
const ADMIN = 'bench-admin-token';
const out = mkdtempSync(join(tmpdir(), 'svc-callgrind-'));
// A home of its own: the svc under valgrind must not write its compile cache into the user's.
const home = mkdtempSync(join(tmpdir(), 'svc-callgrind-home-'));
const served = values.bare
  ? [new URL('./bare-server.mjs', import.meta.url).pathname]
  : [values.bin, 'serve', '--local', '--json', '--port', '0', '--admin-token', ADMIN, '--plan', 'pro'];
const child = spawn(
  'valgrind',
  ['--tool=callgrind', '--separate-threads=yes', '--smc-check=all-non-file', `--callgrind-out-file=${out}/cg.%p`, process.execPath, ...served],
  { env: { PATH: process.env.PATH ?? '', HOME: home, NO_COLOR: '1', BARE_STATUS: '200' }, stdio: ['ignore', 'pipe', 'ignore'] },
);
try {
  const url = await new Promise((resolve) => {
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const line = stdout.split('\n')[0];
      if (stdout.includes('\n')) resolve(line.startsWith('{') ? JSON.parse(line).url : line.trim());
    });
  });
  let requests = [{ method: 'GET', path: '/' }];
  if (!values.bare) {
    const admin = (method, path, body) => call(url, method, `/_local${path}`, ADMIN, body);
    const keys = [];
    for (let i = 0; i < 50; i++) keys.push((await admin('POST', '/users', { name: `bench-${i}`, plan: 'pro' })).json.apiKey.secret);
    const free = (await admin('POST', '/users', { name: 'bench-free', plan: 'free' })).json.apiKey.secret;
    const now = Date.parse((await admin('GET', '/clock')).json.now);
    await admin('POST', '/clock', { advanceSeconds: (60_000 - (now % 60_000)) / 1000 + 0.01 });
    if (which === '429') for (let i = 0; i < 30; i++) await call(url, 'GET', PATH, free);
    const get = (key) => ({ method: 'GET', path: PATH, headers: { authorization: `Bearer ${key}` } });
    requests = which === '200' ? keys.map(get) : which === '429' ? [get(free)] : [get(`sk_${'0'.repeat(64)}`)];
  }
  const load = (amount) => autocannon({ url, connections: 10, amount, requests, timeout: 60 });
  await load(2_000);
  execFileSync('callgrind_control', ['-z', String(child.pid)], { stdio: 'ignore' });
  const result = await load(count);
  execFileSync('callgrind_control', ['-d', String(child.pid)], { stdio: 'ignore' });
  // The main thread's file ends in -01; the others are V8's compiler and GC helpers.
  const main = readdirSync(out).find((name) => /-01$/.test(name));
  const instructions = Number(/^summary:\s+(\d+)/m.exec(readFileSync(join(out, main), 'utf8'))[1]);
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, { count: n }]) => [code, n]));
  console.log(`${values.bare ? 'bare' : values.bin} ${which}: ${result.requests.total} requests ${JSON.stringify(statuses)}, ${Math.round(instructions / result.requests.total)} instructions per request (main thread)`);
} finally {
  child.kill('SIGKILL');
  rmSync(out, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
}
