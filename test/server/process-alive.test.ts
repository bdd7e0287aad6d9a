// tier: process
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isProcessAlive, processStartTime } from '../../src/server/process-alive.js';

describe('isProcessAlive', () => {
  it('takes a process that has exited but is not yet reaped (a zombie) for gone, and its running parent for alive', async () => {
    // A child that exits a second later, when its parent has become `sleep`, which never reaps it.
    // (A child that exits at once may be reaped by the shell before its exec.)
    const parent = spawn('sh', ['-c', 'sleep 1 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const zombie = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (chunk) => resolve(String(chunk)))));
      await expect.poll(() => readFileSync(`/proc/${zombie}/stat`, 'utf8').split(') ')[1]![0]).toBe('Z');
      expect(isProcessAlive(zombie)).toBe(false);
      expect(isProcessAlive(parent.pid!)).toBe(true);
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('takes this process for alive, and a pid no process has for gone', () => {
    expect(isProcessAlive(process.pid)).toBe(true);
    expect(isProcessAlive(2 ** 22 + 1)).toBe(false);
    expect(isProcessAlive(0)).toBe(false);
  });
});

describe('processStartTime', () => {
  it("is field 22 of /proc/<pid>/stat, the same on every read, and null for a pid no process has", () => {
    const own = processStartTime(process.pid);
    expect(own).toBe(readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[19]);
    expect(processStartTime(process.pid)).toBe(own);
    expect(processStartTime(1)).toMatch(/^\d+$/);
    expect(processStartTime(2 ** 22 + 1)).toBeNull();
    expect(processStartTime(0)).toBeNull();
  });
});
