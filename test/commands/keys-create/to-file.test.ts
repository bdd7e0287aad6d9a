// tier: in-process
/**
 * `keys create` and `keys rotate` with --to-file (docs/contract.md §C9):
 * real files in a temp directory, their modes and contents, and keys on a
 * real reference server.
 */
import { chownSync, lstatSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { svc, useLocalServer } from '../../helpers/in-process.js';
import { startSpecServer } from '../../helpers/spec-server.js';

const local = useLocalServer({ plan: 'pro' });
const SECRET = /sk_[A-Za-z0-9]{64}/;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-delivery-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const mode = (path: string) => lstatSync(path).mode & 0o777;
const secretIn = (path: string) => SECRET.exec(readFileSync(path, 'utf8'))![0];

async function keysNamed(name: string): Promise<{ id: string; hint: string }[]> {
  const { stdout } = await svc(['keys', 'list', '--json'], local.env);
  return (JSON.parse(stdout) as { keys: { id: string; name: string; hint: string }[] }).keys.filter((key) => key.name === name);
}

const ping = async (secret: string) => (await svc(['keys', 'ping'], { ...local.env, SVC_API_KEY: secret })).exitCode;

describe('--to-file', () => {
  it('writes SVC_API_KEY=<secret> to a new file of mode 0600, prints no secret, and the key works', async () => {
    const path = join(dir, '.env');
    const result = await svc(['keys', 'create', 'ci', '--to-file', path], local.env);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toMatch(SECRET);
    expect(result.stderr).toContain(`Its secret went to the file ${path}, and was not printed`);
    const text = readFileSync(path, 'utf8');
    expect(text).toMatch(/^SVC_API_KEY=sk_[A-Za-z0-9]{64}\n$/);
    expect(mode(path)).toBe(0o600);
    // No temp file is left beside it.
    expect(readdirSync(dir)).toEqual(['.env']);
    expect(await ping(secretIn(path))).toBe(0);
  });

  it('refuses an existing file without --force before any key is made, and leaves the file alone', async () => {
    const path = join(dir, '.env');
    writeFileSync(path, 'KEEP=1\n', { mode: 0o644 });
    const result = await svc(['keys', 'create', 'refused-existing', '--to-file', path], local.env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`${path} already exists, and svc writes over a file only with --force; nothing was done.`);
    expect(readFileSync(path, 'utf8')).toBe('KEEP=1\n');
    expect(await keysNamed('refused-existing')).toEqual([]);
  });

  it('says a directory is no regular file, with or without --force, before any key is made', async () => {
    for (const force of [[], ['--force']]) {
      const result = await svc(['keys', 'create', 'refused-dir', '--to-file', dir, ...force], local.env);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain(`${dir} is not a regular file`);
    }
    expect(await keysNamed('refused-dir')).toEqual([]);
  });

  it('with --force replaces only the SVC_API_KEY line, keeps the others, drops a duplicate, and takes the mode down to 0600', async () => {
    const path = join(dir, '.env');
    writeFileSync(path, '# deploy\r\nFOO=1\r\nexport SVC_API_KEY=sk_old\r\nBAR="two words"\r\nSVC_API_KEY=sk_older\r\n', { mode: 0o644 });
    const result = await svc(['keys', 'create', 'forced', '--to-file', path, '--force'], local.env);
    expect(result.exitCode).toBe(0);
    const secret = secretIn(path);
    expect(readFileSync(path, 'utf8')).toBe(`# deploy\r\nFOO=1\r\nexport SVC_API_KEY=${secret}\r\nBAR="two words"\r\n`);
    expect(mode(path)).toBe(0o600);
    expect(await ping(secret)).toBe(0);
  });

  it('with --force appends the line to a file without one, and keeps a mode tighter than 0600', async () => {
    const path = join(dir, '.env');
    writeFileSync(path, 'FOO=1', { mode: 0o400 });
    expect((await svc(['keys', 'create', 'appended', '--to-file', path, '--force'], local.env)).exitCode).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe(`FOO=1\nSVC_API_KEY=${secretIn(path)}\n`);
    expect(mode(path)).toBe(0o400);
  });

  it('refuses a symbolic link at the path, --force or not, and writes nothing through it', async () => {
    const target = join(dir, 'target');
    writeFileSync(target, 'TARGET=1\n');
    const link = join(dir, '.env');
    symlinkSync(target, link);
    const dangling = join(dir, 'dangling');
    symlinkSync(join(dir, 'nowhere'), dangling);
    for (const args of [['--to-file', link], ['--to-file', link, '--force'], ['--to-file', dangling]]) {
      const result = await svc(['keys', 'create', 'through-link', ...args], local.env);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain('is a symbolic link, and svc does not write through one');
    }
    expect(readFileSync(target, 'utf8')).toBe('TARGET=1\n');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(['.env', 'dangling', 'target']);
    expect(await keysNamed('through-link')).toEqual([]);
  });

  it('refuses a directory that does not exist before any key is made', async () => {
    const result = await svc(['keys', 'create', 'no-dir', '--to-file', join(dir, 'missing', '.env')], local.env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`the directory ${join(dir, 'missing')} does not exist; nothing was done.`);
    expect(await keysNamed('no-dir')).toEqual([]);
  });

  it('--json says where the secret went and leaves the secret out', async () => {
    const path = join(dir, '.env');
    const result = await svc(['keys', 'create', 'json-file', '--to-file', path, '--json'], local.env);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).not.toMatch(SECRET);
    const document = JSON.parse(result.stdout) as { key: Record<string, unknown>; delivered: unknown };
    expect(document.delivered).toEqual([{ file: path }]);
    expect(document.key).toMatchObject({ name: 'json-file' });
    expect(document.key).not.toHaveProperty('secret');
  });

  it('--force alone, or beside --finish, is a usage error', async () => {
    expect(await svc(['keys', 'create', 'x', '--force'], local.env)).toMatchObject({ exitCode: 2, stderr: expect.stringContaining('--force is about the file of --to-file') });
    expect((await svc(['keys', 'rotate', '--finish', '--to-file', join(dir, '.env')], local.env)).exitCode).toBe(2);
  });

  it('rotate --overlap --to-file, then --finish: the file holds the new key, the old one works until --finish', async () => {
    const created = JSON.parse((await svc(['keys', 'create', 'fleet', '--json'], local.env)).stdout).key as { id: string; secret: string };
    const path = join(dir, '.env');
    writeFileSync(path, `OTHER=1\nSVC_API_KEY=${created.secret}\n`, { mode: 0o600 });
    const result = await svc(['keys', 'rotate', created.id, '--overlap', '--to-file', path, '--force'], local.env);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toMatch(SECRET);
    const secret = secretIn(path);
    expect(secret).not.toBe(created.secret);
    expect(readFileSync(path, 'utf8')).toBe(`OTHER=1\nSVC_API_KEY=${secret}\n`);
    expect([await ping(secret), await ping(created.secret)]).toEqual([0, 0]);
    expect((await svc(['keys', 'rotate', '--finish'], local.env)).exitCode).toBe(0);
    expect([await ping(secret), await ping(created.secret)]).toEqual([0, 3]);
  });

  it('rotate --json with --to-file leaves the secret out of the document', async () => {
    const created = JSON.parse((await svc(['keys', 'create', 'json-rotate', '--json'], local.env)).stdout).key as { id: string };
    const path = join(dir, '.env');
    const result = await svc(['keys', 'rotate', '--yes', created.id, '--to-file', path, '--json'], local.env);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).not.toMatch(SECRET);
    expect(JSON.parse(result.stdout)).toMatchObject({ key: { name: 'json-rotate' }, delivered: [{ file: path }], previous: expect.anything() });
    expect(await ping(secretIn(path))).toBe(0);
  });
});

describe.skipIf(process.getuid?.() !== 0)('--to-file and a file of another user (needs root to give a file away; skipped when not root)', () => {
  it('--force does not replace it, and no key is made', async () => {
    const path = join(dir, '.env');
    writeFileSync(path, 'THEIRS=1\n', { mode: 0o600 });
    chownSync(path, 4242, 4242);
    const result = await svc(['keys', 'create', 'not-mine', '--to-file', path, '--force'], local.env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`${path} belongs to another user, and svc does not replace another user's file; nothing was done.`);
    expect(readFileSync(path, 'utf8')).toBe('THEIRS=1\n');
    expect(lstatSync(path).uid).toBe(4242);
    expect(await keysNamed('not-mine')).toEqual([]);
  });
});

describe('a secret that is not an API key', () => {
  it('goes to no file: a hostile answer cannot put lines or escapes into .env; with --on-delivery-failure print it is printed escaped, exit 1', async () => {
    const server = await startSpecServer({ created: (record, secret) => ({ ...record, secret: `${secret}\nLD_PRELOAD=/tmp/evil.so\u001b]52;c;eA==\u0007` }) });
    try {
      const path = join(dir, '.env');
      const result = await svc(['keys', 'create', 'ci', '--to-file', path, '--on-delivery-failure', 'print'], { SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey, SVC_CONFIG_DIR: join(dir, 'config') });
      expect(result.exitCode).toBe(1);
      expect(() => lstatSync(path)).toThrow();
      expect(result.stderr).toContain('what the server answered as the secret is not an API key');
      expect(result.stdout).toContain('\\nLD_PRELOAD=/tmp/evil.so\\x1b]52;c;eA==\\x07');
      expect(result.stdout).not.toContain('\u001b');
    } finally {
      await server.close();
    }
  });
});
