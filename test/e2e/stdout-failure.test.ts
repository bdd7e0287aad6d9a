// tier: process
/**
 * A stdout that refuses writes (docs/contract.md §C5, "never lose a
 * secret"): svc runs as users run it, with its stdout on /dev/full, which
 * every Linux has and which fails each write with ENOSPC as a full disk
 * does. Keys live on a real reference server.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cleanEnv, SVC_BIN, useLocalServer } from '../helpers/cli.js';

const local = useLocalServer(['--plan', 'pro']);

interface Run {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/** The built svc with stdout on /dev/full (or stderr too), no stdin, and what reached stderr. */
function svcToFull(args: string[], env: Record<string, string>, streams: 'stdout' | 'both' = 'stdout'): Promise<Run> {
  const full = openSync('/dev/full', 'w');
  const child = spawn('node', [SVC_BIN, ...args], { env: cleanEnv(env), stdio: ['ignore', full, streams === 'both' ? full : 'pipe'] });
  closeSync(full);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (exitCode) => resolve({ exitCode, stdout: '', stderr }));
  });
}

/** The built svc with stdout and stderr piped to this process. */
function svc(args: string[], env: Record<string, string>): Promise<Run> {
  const child = spawn('node', [SVC_BIN, ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (exitCode) => resolve({ exitCode, stdout, stderr }));
  });
}

async function keysNamed(name: string): Promise<{ id: string; enabled: boolean }[]> {
  const { stdout } = await svc(['keys', 'list', '--json'], local.env);
  return (JSON.parse(stdout) as { keys: { id: string; name: string; enabled: boolean }[] }).keys.filter((key) => key.name === name);
}

/** A failure told without a stack trace, exit 1. */
function expectToldFailure(result: Run) {
  expect(result.exitCode).toBe(1);
  expect(result.stderr).not.toMatch(/^\s+at /m);
  expect(result.stderr).not.toContain('throw error');
}

/** What a new key whose secret stdout did not take must come to: told lost, and revoked by svc (the id from its message). */
function expectLostKeyRevoked(result: Run, why: string): string {
  expectToldFailure(result);
  const told = new RegExp(`The new key (key_\\w+) was created, but its secret could not be written to stdout \\(${why}[^)]*\\): the secret is lost \\(svc keeps no copy\\), so svc revoked the key\\.`).exec(result.stderr);
  expect(told, result.stderr).not.toBeNull();
  // The one-time warning is for a secret that was shown.
  expect(result.stderr).not.toContain('This is the only time this secret is shown');
  return told![1]!;
}

describe('stdout on a full device', () => {
  it('keys create: exits 1 saying the secret was lost, and revokes the key nobody can use, never a stack trace', async () => {
    const result = await svcToFull(['keys', 'create', 'full-create'], local.env);
    expectLostKeyRevoked(result, 'ENOSPC');
    expect(await keysNamed('full-create')).toEqual([]);
  });

  it('keys create --to-command that fails: the printed fallback fails too, the message says both, and the key is revoked', async () => {
    const result = await svcToFull(['keys', 'create', 'full-command', '--to-command', 'exit 1', '--on-delivery-failure', 'print'], local.env);
    expectLostKeyRevoked(result, 'ENOSPC');
    expect(result.stderr).toContain('could not be delivered: `exit 1` exited with status 1');
    expect(await keysNamed('full-command')).toEqual([]);
  });

  it('keys rotate: the new key is revoked; the old key is left enabled and still authenticates', async () => {
    const created = await svc(['keys', 'create', 'full-rotate', '--json'], local.env);
    const old = JSON.parse(created.stdout).key as { id: string; secret: string };
    const result = await svcToFull(['keys', 'rotate', old.id, '--yes'], local.env);
    expect(expectLostKeyRevoked(result, 'ENOSPC')).not.toBe(old.id);
    expect(result.stderr).toContain(`The old key ${old.id} was left as it was.`);
    expect(await keysNamed('full-rotate')).toEqual([{ ...(await keysNamed('full-rotate'))[0], id: old.id, enabled: true }]);
    expect((await svc(['keys', 'ping'], { ...local.env, SVC_API_KEY: old.secret })).exitCode).toBe(0);
  });

  it('svc api creating a key: a raw request, so the message names the key to revoke and svc leaves it', async () => {
    const result = await svcToFull(['api', '/user/api-keys', '-X', 'POST', '-f', 'name=full-api'], local.env);
    const [key] = await keysNamed('full-api');
    expectToldFailure(result);
    expect(result.stderr).toContain('its secret could not be written to stdout (ENOSPC');
    expect(result.stderr).toContain(`svc keys revoke ${key!.id}`);
  });

  it('data that could not be written is a failure with a message, not success', async () => {
    const result = await svcToFull(['keys', 'list'], local.env);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe('error: Could not write to stdout: ENOSPC: no space left on device, write; what svc printed there is incomplete.\n');
  });

  it('with stderr failing too, exits non-zero and leaves the old key of a rotation as it was', async () => {
    const created = await svc(['keys', 'create', 'full-both', '--json'], local.env);
    const old = JSON.parse(created.stdout).key as { id: string; secret: string };
    const result = await svcToFull(['keys', 'rotate', old.id, '--yes'], local.env, 'both');
    expect(result.exitCode).toBe(1);
    expect((await svc(['keys', 'ping'], { ...local.env, SVC_API_KEY: old.secret })).exitCode).toBe(0);
  });
});

describe('a reader of stdout that went away before the secret came (EPIPE)', () => {
  it('keys rotate exits non-zero and leaves the old key working', async () => {
    const created = await svc(['keys', 'create', 'gone-reader', '--json'], local.env);
    const old = JSON.parse(created.stdout).key as { id: string; secret: string };
    const child = spawn('node', [SVC_BIN, 'keys', 'rotate', old.id, '--yes'], { env: cleanEnv(local.env), stdio: ['ignore', 'pipe', 'pipe'] });
    // Closed before svc has even read the old key: its first write to stdout is the secret's.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const exitCode = await new Promise<number | null>((resolve) => child.on('close', resolve));
    // Not 141: svc stays to revoke the key whose secret nobody read, and says so.
    expect(expectLostKeyRevoked({ exitCode, stdout: '', stderr }, 'write EPIPE')).not.toBe(old.id);
    expect((await keysNamed('gone-reader')).map((key) => key.id)).toEqual([old.id]);
    expect((await svc(['keys', 'ping'], { ...local.env, SVC_API_KEY: old.secret })).exitCode).toBe(0);
  });
});

/** The built svc through sh, for redirections spawn cannot make (`>&-`). */
function svcShell(args: string[], redirect: string, env: Record<string, string>): Promise<Run> {
  const child = spawn('sh', ['-c', `exec node "$@" ${redirect}`, 'sh', SVC_BIN, ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (exitCode) => resolve({ exitCode, stdout: '', stderr }));
  });
}

// Node opens /dev/null in place of a closed stdout before svc runs, so `>&-` and `>/dev/null` are one case.
describe.each([['closed (>&-)', '>&-'], ['/dev/null', '>/dev/null']])('stdout %s', (_, redirect) => {
  it('keys rotate is refused before anything is made: the old key stays enabled and still authenticates', async () => {
    const name = `discard-rotate-${redirect.length}`;
    const created = await svc(['keys', 'create', name, '--json'], local.env);
    const old = JSON.parse(created.stdout).key as { id: string; secret: string };
    const result = await svcShell(['keys', 'rotate', old.id, '--yes'], redirect, local.env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('Stdout is /dev/null (or was closed), where the new secret would be lost. Nothing was done.');
    expect((await keysNamed(name)).map((key) => [key.id, key.enabled])).toEqual([[old.id, true]]);
    expect((await svc(['keys', 'ping'], { ...local.env, SVC_API_KEY: old.secret })).exitCode).toBe(0);
  });

  it('keys create is refused before any key is made', async () => {
    const name = `discard-create-${redirect.length}`;
    const result = await svcShell(['keys', 'create', name], redirect, local.env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('Send stdout somewhere, or give --to-file <path> or --to-command <command>.');
    expect(await keysNamed(name)).toEqual([]);
  });

  it('svc api POST to the key collection is refused before any key is made; a GET is not', async () => {
    const name = `discard-api-${redirect.length}`;
    const result = await svcShell(['api', '/user/api-keys/', '-f', `name=${name}`], redirect, local.env);
    expect(result.exitCode, result.stderr).toBe(2);
    expect(result.stderr).toContain('Send stdout somewhere, or make the key with `svc keys create NAME --to-file <path>`.');
    expect(await keysNamed(name)).toEqual([]);
    expect((await svcShell(['api', '/user/api-keys'], redirect, local.env)).exitCode).toBe(0);
  });

  it('a failed --to-command cannot fall back to printing: the message says the secret is lost, and the key is revoked', async () => {
    const name = `discard-command-${redirect.length}`;
    const result = await svcShell(['keys', 'create', name, '--to-command', 'exit 3', '--on-delivery-failure', 'print'], redirect, local.env);
    expect(result.stderr).toContain('could not be delivered: `exit 3` exited with status 3');
    expectLostKeyRevoked(result, 'stdout is /dev/null, or was closed');
    expect(await keysNamed(name)).toEqual([]);
  });
});
