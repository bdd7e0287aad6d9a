/**
 * What a test of svc scan makes: trees of files in temporary directories,
 * removed after the file's tests, and keys made as a user makes them.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';
import { svc } from './in-process.js';

/** `tree({ 'a/b.txt': 'text' })`: a new directory holding those files; every one made is removed after the file's tests. */
export function useTrees(): (files: Record<string, string>) => string {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return (files) => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-scan-'));
    dirs.push(dir);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    return dir;
  };
}

/** A key made with `svc keys create NAME --json` and `args`: its id and secret. */
export async function createKey(env: Record<string, string>, name: string, ...args: string[]): Promise<{ id: string; secret: string }> {
  const result = await svc(['keys', 'create', name, '--json', ...args], env);
  expect(result.exitCode, result.stderr).toBe(0);
  return JSON.parse(result.stdout).key;
}
