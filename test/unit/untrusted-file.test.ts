// tier: in-process
/**
 * readUntrusted: a regular file, read whole up to its bound and no further,
 * whatever fstat said of its size (a file that grew since, or one of
 * /proc's, which say 0).
 */
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readUntrusted, UntrustedFileError } from '../../src/cli/config/untrusted-file.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-untrusted-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const problem = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (error instanceof UntrustedFileError) return error.problem;
    throw error;
  }
  return null;
};

describe('readUntrusted', () => {
  it('reads a file of any size up to the bound, the bound itself included, and refuses one byte more', () => {
    for (const size of [0, 1, 99, 100]) {
      writeFileSync(join(dir, 'f'), 'x'.repeat(size));
      expect(readUntrusted(join(dir, 'f'), 100).text).toBe('x'.repeat(size));
    }
    writeFileSync(join(dir, 'f'), 'x'.repeat(101));
    expect(problem(() => readUntrusted(join(dir, 'f'), 100))).toBe('is larger than 100 bytes');
  });

  it('reads past what fstat said, to the end or the bound: a /proc file says it holds 0 bytes', () => {
    const whole = readFileSync('/proc/self/status', 'utf8');
    expect(whole.length).toBeGreaterThan(200);
    // What /proc/self/status says changes as the process runs (its memory): the fields up to the first that can.
    expect(readUntrusted('/proc/self/status', 64 * 1024).text.split('\n')[0]).toBe(whole.split('\n')[0]);
    expect(problem(() => readUntrusted('/proc/self/status', 100))).toBe('is larger than 100 bytes');
  });

  it('never follows a symbolic link', () => {
    writeFileSync(join(dir, 'target'), 'secret');
    symlinkSync(join(dir, 'target'), join(dir, 'link'));
    expect(problem(() => readUntrusted(join(dir, 'link'), 100))).toBe('is a symbolic link');
  });
});
