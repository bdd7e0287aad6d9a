// tier: process
/**
 * Every way a job ends (docs/contract.md §C10, "How a job ends"), as CI
 * ends them: the command's exit; SIGINT, SIGTERM or SIGHUP to svc; a
 * runner's SIGKILL to svc's process group; svc's own stdout failing (a log
 * on a full disk, /dev/full). Each with and without masking, with a command
 * that traps the signals and one that does not, with and without a daemon
 * the command started in a session of its own. After each: the key made
 * for the job answers 401 within the documented bound, no process of the
 * command's process group is left, and svc's status says how the job ended.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { cleanEnv, SVC_BIN } from '../helpers/cli.js';
import { call, useLocalServer } from '../helpers/in-process.js';

const local = useLocalServer({ plan: 'pro' });
const dir = mkdtempSync(join(tmpdir(), 'svc-job-end-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The job: records its key and process id, perhaps starts a daemon (in a
 * session of its own, so that it leaves the job's process group) and
 * perhaps traps the stop signals, says "ready", then exits with $4 or, for
 * "wait", runs until it is ended. "spill" prints 256 KiB, its key in every
 * line, then exits 0.
 */
const JOB = join(dir, 'job.sh');
writeFileSync(
  JOB,
  `#!/bin/sh
record=$1 traps=$2 daemon=$3 how=$4
[ "$traps" = trap ] && trap 'echo trapped >&2' INT TERM HUP
if [ "$daemon" = daemon ]; then
  setsid sh -c 'echo $$ > "$1"; exec sleep 300' sh "$record.daemon" </dev/null >/dev/null 2>&1 &
  while [ ! -s "$record.daemon" ]; do sleep 0.05; done
fi
printf '%s %s\\n' "$SVC_API_KEY" "$$" > "$record"
echo ready
case $how in
  wait) while :; do sleep 0.1; done ;;
  spill) i=0; while [ $i -lt 2048 ]; do echo "line $i $SVC_API_KEY ................................................................................"; i=$((i + 1)); done; exit 0 ;;
  *) exit "$how" ;;
esac
`,
  { mode: 0o755 },
);

type Way = 'exit' | 'SIGINT' | 'SIGTERM' | 'SIGHUP' | 'SIGKILL to the group' | 'stdout fails';
const WAYS: Way[] = ['exit', 'SIGINT', 'SIGTERM', 'SIGHUP', 'SIGKILL to the group', 'stdout fails'];

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

let runs = 0;

/** svc run --ephemeral of the job, in a process group of its own (as a CI runner starts a step), ended the `way` given. */
async function job(way: Way, masking: boolean, traps: boolean, daemon: boolean) {
  const record = join(dir, `job-${++runs}`);
  const how = way === 'exit' ? '3' : way === 'stdout fails' ? 'spill' : 'wait';
  const full = way === 'stdout fails' ? openSync('/dev/full', 'w') : null;
  const args = ['run', '--ephemeral', '--grace', '1s', ...(masking ? [] : ['--no-masking']), '--', JOB, record, traps ? 'trap' : 'plain', daemon ? 'daemon' : 'none', how];
  const env = cleanEnv({ SVC_BASE_URL: local.server.url, SVC_API_KEY: local.server.apiKey!, SVC_CONFIG_DIR: join(dir, 'config') });
  const child = spawn(process.execPath, [SVC_BIN, ...args], { env: env as NodeJS.ProcessEnv, stdio: ['ignore', full ?? 'pipe', 'pipe'], detached: true });
  if (full !== null) closeSync(full);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const ended = new Promise<Ended>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stderr })));
  if (way !== 'exit' && way !== 'stdout fails') {
    await new Promise<void>((resolve) => child.stdout!.on('data', () => stdout.includes('ready') && resolve()));
    if (way === 'SIGKILL to the group') process.kill(-child.pid!, 'SIGKILL');
    else child.kill(way);
  }
  const result = await ended;
  const [key, pid] = readFileSync(record, 'utf8').trim().split(' ') as [string, string];
  const daemonPid = daemon ? Number(readFileSync(`${record}.daemon`, 'utf8')) : null;
  return { result, key, group: Number(pid), daemonPid, stdout };
}

/** Whether a live process (a zombie is not one: it waits only to be reaped) is left in the job's process group or session. */
function groupAlive(group: number): boolean {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .some((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
        const [state, , pgrp, session] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return state !== 'Z' && (Number(pgrp) === group || Number(session) === group);
      } catch {
        return false;
      }
    });
}

const works = async (key: string) => (await call(local.server.url, 'GET', '/api/service/user/api-keys', key)).status;

describe.concurrent.each(WAYS)('a job that ends by %s', (way) => {
  it.for([
    [true, false, false],
    [true, true, false],
    [true, false, true],
    [true, true, true],
    [false, false, false],
    [false, true, false],
    [false, false, true],
    [false, true, true],
  ] as const)('masking %s, trapping signals %s, a daemon %s: the key is dead, the group is gone, the status says how it ended', async ([masking, traps, daemon], { expect }) => {
    const { result, key, group, daemonPid } = await job(way, masking, traps, daemon);
    try {
      // The reaper's bound is 15 s from svc's end (docs/contract.md §C10); every other way revokes before svc ends.
      await expect.poll(() => works(key), { timeout: 20_000 }).toBe(401);
      await expect.poll(() => groupAlive(group), { timeout: 20_000 }).toBe(false);
      if (daemonPid !== null) expect(() => process.kill(daemonPid, 0), 'the daemon left the group and lives on, with a dead key').not.toThrow();
      // svc ends by the signal it got, after the revoke, whatever the command made of it: a shell loop around it stops.
      const expected = way === 'exit' ? { code: 3, signal: null } : way === 'stdout fails' ? { code: 1, signal: null } : { code: null, signal: way === 'SIGKILL to the group' ? 'SIGKILL' : way };
      expect({ code: result.code, signal: result.signal }, result.stderr).toEqual(expected);
      if (way === 'SIGKILL to the group') expect(result.stderr).toMatch(/It killed what was left of the command \(process group \d+\)\.\nIt revoked the key made for the command, key_\w+\./);
      if (way === 'stdout fails') expect(result.stderr).toContain("svc could not write the command's stdout");
      if (way !== 'SIGKILL to the group') expect(result.stderr).toMatch(/Revoked key key_\w+\./);
      expect(result.stderr).not.toContain(key);
    } finally {
      if (daemonPid !== null) process.kill(daemonPid, 'SIGKILL');
    }
  });
});
