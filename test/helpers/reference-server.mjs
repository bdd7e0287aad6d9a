// The one way tests and bench/ start the built reference server as users run
// it (`svc serve --local --json`, a child process of its own) and the one way
// they call it over HTTP. Plain JavaScript, so bench/ runs it under node
// alone; reference-server.d.mts gives the tests its types.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';

export const SVC_BIN = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));
const BUILT = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

/** `svc serve --local --json --port 0 ...args`, resolved once its ready line is read. */
export async function serveProcess(args = [], { bin = SVC_BIN, env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, cwd } = {}) {
  if (bin === SVC_BIN && !existsSync(BUILT)) throw new Error('dist/main.js is missing: run `npm run build` first');
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [bin, 'serve', '--local', '--json', '--port', '0', ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const ready = await new Promise((resolve, reject) => {
    child.stdout.on('data', () => {
      if (stdout.includes('\n')) resolve(JSON.parse(stdout.slice(0, stdout.indexOf('\n'))));
    });
    exited.then(({ code }) => reject(new Error(`svc serve exited ${code} before it was ready: ${stderr}`)));
  });
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    ...ready,
    ready,
    port: Number(new URL(ready.url).port),
    child,
    exited,
    startMs: Number(process.hrtime.bigint() - started) / 1e6,
    stdout: () => stdout,
    stderr: () => stderr,
    alive,
    stop: () =>
      alive()
        ? new Promise((resolve) => {
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          })
        : Promise.resolve(),
  };
}

/**
 * One request to a reference server: under /api/service with a key, under
 * /_local with the admin token, or anywhere; `token` null sends none. A body
 * goes as JSON unless `raw` is given; `headers` are sent as given, over both. `json` is the parsed answer, undefined
 * when there is none or it is not JSON.
 */
export async function call(baseUrl, method, path, token, body, { raw, headers = {}, dispatcher } = {}) {
  const sent = {};
  if (token !== null) sent.authorization = `Bearer ${token}`;
  let payload = raw;
  if (body !== undefined) {
    payload = JSON.stringify(body);
    sent['content-type'] = 'application/json';
  }
  // Given headers come last: a test may send a header of its own in place of either.
  Object.assign(sent, headers);
  const res = await request(baseUrl + path, { method, headers: sent, body: payload, dispatcher });
  const text = await res.body.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}

/** Moves the server clock so the current rate window ends in `seconds` (±1 s of real time). */
export async function windowEndsIn(server, seconds) {
  const { json } = await call(server.url, 'GET', '/_local/clock', server.adminToken);
  const left = 60 - ((Date.parse(json.now) / 1000) % 60);
  const advance = left > seconds ? left - seconds : left + 60 - seconds;
  await call(server.url, 'POST', '/_local/clock', server.adminToken, { advanceSeconds: advance });
}
