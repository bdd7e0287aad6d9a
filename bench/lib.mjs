// Shared pieces of the benchmark: the servers it runs as child processes,
// plain HTTP calls, statistics and the description of the machine.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { call, serveProcess, SVC_BIN } from '../test/helpers/reference-server.mjs';

export { call, SVC_BIN };

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const ADMIN_TOKEN = 'bench-admin-token';

/** The environment of every child: nothing inherited that could change svc's behaviour. */
export function childEnv(extra = {}) {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NO_COLOR: '1', ...extra };
}

/**
 * `svc serve --local` from the built bin, as users run it: a child process
 * of its own, so it has a core to itself while the load generator runs here.
 */
export async function startSvcServer(args = [], { bin = SVC_BIN } = {}) {
  const server = await serveProcess(['--admin-token', ADMIN_TOKEN, ...args], { bin, cwd: ROOT, env: childEnv() });
  return {
    ...server,
    pid: server.child.pid,
    admin: (method, path, body) => call(server.url, method, `/_local${path}`, ADMIN_TOKEN, body),
    api: (method, path, key, body) => call(server.url, method, `/api/service${path}`, key, body),
    /** Moves the server clock just past the start of the next rate window, so a measurement never straddles two. */
    async startOfNextWindow() {
      const now = Date.parse((await this.admin('GET', '/clock')).json.now);
      await this.admin('POST', '/clock', { advanceSeconds: (60_000 - (now % 60_000)) / 1000 + 0.01 });
    },
  };
}

/** A bare node:http server in a child process, answering every request with one fixed status and body. */
export async function startBareServer(status, body) {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./bare-server.mjs', import.meta.url))], {
    env: childEnv({ BARE_STATUS: String(status), BARE_BODY: body }),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      if (stdout.includes('\n')) resolve(stdout.trim());
    });
    child.once('exit', (code) => reject(new Error(`bare server exited ${code}`)));
  });
  return { url, pid: child.pid, stop: () => stopChild(child) };
}

function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Resident set size and its peak, in MiB, from /proc (Linux only; null elsewhere). */
export function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)[1]);
    return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

/**
 * CPU time a process has used so far, user and system, in ms (Linux only; null elsewhere).
 * /proc counts in clock ticks, 100 a second on Linux whatever the kernel's own tick rate (USER_HZ).
 */
export function cpuMsOf(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name, which is in parentheses and may hold spaces.
    const rest = fields.slice(fields.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) * 10;
  } catch {
    return null;
  }
}

export function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  const high = Math.ceil(at);
  return sorted[low] + (sorted[high] - sorted[low]) * (at - low);
}

export const median = (values) => quantile(values, 0.5);

export function elapsedMs(since) {
  return Number(process.hrtime.bigint() - since) / 1e6;
}

export function machine() {
  const cpu = cpus();
  const memory = readMeminfo();
  return {
    cpu: cpu[0]?.model.trim() ?? 'unknown',
    cores: cpu.length,
    memoryGiB: totalmem() / 1024 ** 3,
    memoryAvailableGiB: memory,
    os: `${process.platform} ${release()}`,
    node: process.version,
    date: new Date().toISOString(),
    // The machine may be shared with other work; the load before the run says how quiet it was.
    loadAverage: loadavg().map((n) => n.toFixed(2)).join(' '),
  };
}

function readMeminfo() {
  try {
    const kib = Number(/^MemAvailable:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))[1]);
    return kib / 1024 ** 2;
  } catch {
    return null;
  }
}
