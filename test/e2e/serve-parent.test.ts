// tier: process
/**
 * `npx svc-cli serve --local & … kill $!` (issue 38): the process killed is
 * npm, which does not pass SIGTERM on to svc. Run by npm (npm_lifecycle_event
 * set), svc serve stops once its parent is gone, saving its --data file and
 * freeing the lock. Here a shell that does not forward signals stands in for npm.
 */
import { execa } from 'execa';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, SVC_BIN } from '../helpers/cli.js';

let dir: string;
let serverPid: number | undefined;
afterEach(() => {
  if (serverPid !== undefined && alive(serverPid)) process.kill(serverPid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('svc serve run by npm', () => {
  it('stops when the npm process that started it is killed, and frees its --data lock', async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-serve-parent-'));
    const [data, ready, pid] = [join(dir, 'state.json'), join(dir, 'ready.json'), join(dir, 'pid')];
    // The shell waits for svc and ends on SIGTERM without passing it on, as npm's exec does.
    const npm = execa('sh', ['-c', 'node "$0" serve --local --json --port 0 --data "$1" > "$2" & echo $! > "$3"; wait', SVC_BIN, data, ready, pid], {
      env: { ...cleanEnv(), npm_lifecycle_event: 'npx' },
      extendEnv: false,
      reject: false,
    });
    await expect.poll(() => existsSync(ready) && readFileSync(ready, 'utf8').includes('\n'), { timeout: 15_000 }).toBe(true);
    serverPid = Number(readFileSync(pid, 'utf8'));
    expect(existsSync(`${data}.lock`)).toBe(true);
    npm.kill('SIGTERM');
    await npm;
    await expect.poll(() => alive(serverPid!), { timeout: 10_000 }).toBe(false);
    expect(existsSync(`${data}.lock`)).toBe(false);
    expect(existsSync(data)).toBe(true);
  });
});
