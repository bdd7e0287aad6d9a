// tier: process
/**
 * --to-command and --to-file against real components (docs/contract.md
 * §C9): a real shell command that gets the secret on its stdin (and reads
 * its own argv and environment from /proc), commands that fail or are
 * stopped, a file system that refuses the write; keys on a real reference
 * server. svc runs in this process (main), so a Ctrl-C can be delivered
 * through its deps at the moment the command is known to be running.
 */
import { execa } from 'execa';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Deps } from '../../src/cli/terminal/deps.js';
import { keyHint } from '../../src/contract/key-format.js';
import { cleanEnv, svc as svcProcess, SVC_BIN } from '../helpers/cli.js';
import { call, svc, useLocalServer } from '../helpers/in-process.js';
import { atNth, signalsAt } from '../helpers/signals.js';
import { canMount, mountTmpfs } from '../helpers/tmpfs.js';

const local = useLocalServer({ plan: 'pro' });

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-delivery-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const at = (name: string) => join(dir, name);
const ping = async (secret: string) => (await svc(['keys', 'ping'], { ...local.env, SVC_API_KEY: secret })).exitCode;

async function createKey(name: string): Promise<{ id: string; secret: string }> {
  return JSON.parse((await svc(['keys', 'create', name, '--json'], local.env)).stdout).key as { id: string; secret: string };
}

async function keyIds(name: string): Promise<string[]> {
  const { stdout } = await svc(['keys', 'list', '--json'], local.env);
  return (JSON.parse(stdout) as { keys: { id: string; name: string }[] }).keys.filter((key) => key.name === name).map((key) => key.id);
}

/** NUL-separated /proc text (argv, environment) as a list. */
const entries = (path: string) => readFileSync(path, 'utf8').split('\0').filter(Boolean);

describe('--to-command', () => {
  it("hands the secret to the command's stdin only: not in its argv, not in its environment, not printed", async () => {
    // $$ is the shell svc started: its argv and environment are what svc gave it.
    const command = `cat > ${at('got')}; cat /proc/$$/cmdline > ${at('argv')}; cat /proc/$$/environ > ${at('environ')}; echo said-on-stdout; echo said-on-stderr >&2`;
    const result = await svc(['keys', 'create', 'to-command', '--to-command', command], { ...local.env, DELIVERY_MARK: 'passed-on' });
    expect(result.exitCode).toBe(0);
    const secret = readFileSync(at('got'), 'utf8');
    // Exactly the secret: no newline for a secret store to keep as part of it.
    expect(secret).toMatch(/^sk_[A-Za-z0-9]{64}$/);
    expect(await ping(secret)).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toContain(secret);
    // The command's own output goes to svc's stderr, so svc's stdout stays data.
    expect(result.stderr).toContain('said-on-stdout\nsaid-on-stderr\n');
    const argv = entries(at('argv'));
    expect(argv).toEqual(['/bin/sh', '-c', command]);
    expect(argv.join(' ')).not.toContain(secret);
    const environ = entries(at('environ'));
    expect(environ.join('\n')).not.toContain(secret);
    expect(environ).toContain('DELIVERY_MARK=passed-on');
    // Not even the key svc itself ran with (during a rotation, the one being replaced).
    expect(environ.filter((entry) => entry.startsWith('SVC_API_KEY='))).toEqual([]);
    expect(environ.join('\n')).not.toContain(local.env.SVC_API_KEY);
  });

  it('a command that exits 1, with --on-delivery-failure print: the secret is printed after all, once, and svc exits 1; the key works', async () => {
    const result = await svc(['keys', 'create', 'failing-command', '--to-command', `cat > ${at('got')}; exit 1`, '--on-delivery-failure', 'print'], local.env);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toMatch(/^sk_[A-Za-z0-9]{64}$/);
    expect(result.stderr).toContain('The new secret could not be delivered: `cat > ');
    expect(result.stderr).toContain('exited with status 1. svc printed it instead (on stdout): store it now.');
    expect(result.stderr).toContain('This is the only time this secret is shown');
    expect(await ping(result.stdout)).toBe(0);
  });

  it('with --json and --on-delivery-failure print, a failed delivery prints the document with its secret', async () => {
    const result = await svc(['keys', 'create', 'failing-json', '--json', '--to-command', 'exit 7', '--on-delivery-failure', 'print'], local.env);
    expect(result.exitCode).toBe(1);
    const document = JSON.parse(result.stdout) as { key: { secret: string }; delivered: unknown[] };
    expect(document.delivered).toEqual([]);
    expect(await ping(document.key.secret)).toBe(0);
    expect(result.stderr).toContain('`exit 7` exited with status 7');
  });

  it('a command that cannot be found fails the same way (the shell says 127)', async () => {
    const result = await svc(['keys', 'create', 'no-such-command', '--to-command', 'svc-no-such-program-here', '--on-delivery-failure', 'print'], local.env);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('exited with status 127');
    expect(await ping(result.stdout)).toBe(0);
  });

  it('rotate with a failing delivery leaves the old key working, prints the new one, and records no rotation', async () => {
    const old = await createKey('rotate-failing');
    const result = await svc(['keys', 'rotate', old.id, '--overlap', '--to-command', 'exit 1', '--on-delivery-failure', 'print'], local.env);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`The old key ${old.id} was left as it was.`);
    expect([await ping(result.stdout), await ping(old.secret)]).toEqual([0, 0]);
    expect((await svc(['keys', 'rotate', '--finish'], local.env)).stderr).toContain('No rotation is pending');
    // Without --overlap too: the old key is never revoked for a secret nobody received.
    const plain = await svc(['keys', 'rotate', '--yes', old.id, '--to-command', 'exit 1', '--on-delivery-failure', 'print'], local.env);
    expect(plain.exitCode).toBe(1);
    expect([await ping(plain.stdout), await ping(old.secret)]).toEqual([0, 0]);
    expect((await keyIds('rotate-failing')).length).toBe(3);
  });

  it('rotate --overlap --to-command, then --finish: the zero-downtime path', async () => {
    const old = await createKey('rotate-ci');
    const result = await svc(['keys', 'rotate', old.id, '--overlap', '--to-command', `cat > ${at('got')}`], local.env);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('');
    const secret = readFileSync(at('got'), 'utf8');
    expect(result.stderr).not.toContain(secret);
    expect(result.stderr).toContain('keeps working beside');
    expect([await ping(secret), await ping(old.secret)]).toEqual([0, 0]);
    expect((await svc(['keys', 'rotate', '--finish'], local.env)).exitCode).toBe(0);
    expect([await ping(secret), await ping(old.secret)]).toEqual([0, 3]);
  });

  it("the command's time is not taken from the requests after it: an hour-long delivery still revokes the old key", async () => {
    const old = await createKey('slow-delivery');
    // svc's clock jumps an hour once the command has the secret, as if it had waited that long on a person.
    const now = () => Date.now() + (existsSync(at('got')) ? 3_600_000 : 0);
    const result = await svc(['keys', 'rotate', '--yes', old.id, '--to-command', `cat > ${at('got')}`], local.env, { deps: { now } });
    expect(result.stderr).toContain(`Revoked the old key ${old.id}`);
    expect(result.exitCode).toBe(0);
    expect([await ping(readFileSync(at('got'), 'utf8')), await ping(old.secret)]).toEqual([0, 3]);
  });

  it('with --to-file too, both get the secret, the file first; a command failing after the file says the file has it', async () => {
    const both = await svc(['keys', 'create', 'both', '--to-file', at('.env'), '--to-command', `cat > ${at('got')}`, '--json'], local.env);
    expect(both.exitCode).toBe(0);
    const secret = readFileSync(at('got'), 'utf8');
    expect(readFileSync(at('.env'), 'utf8')).toBe(`SVC_API_KEY=${secret}\n`);
    expect(JSON.parse(both.stdout)).toMatchObject({ delivered: [{ file: at('.env') }, { command: `cat > ${at('got')}` }] });

    const half = await svc(['keys', 'create', 'half', '--to-file', at('half.env'), '--to-command', 'exit 1', '--on-delivery-failure', 'print'], local.env);
    expect(half.exitCode).toBe(1);
    expect(readFileSync(at('half.env'), 'utf8')).toBe(`SVC_API_KEY=${half.stdout}\n`);
    expect(half.stderr).toContain(`It did reach the file ${at('half.env')} before that.`);
  });

  it('Ctrl-C while the command runs stops it, prints the secret and exits 130; a rotation leaves the old key', async () => {
    const old = await createKey('interrupted');
    const listeners: ((signal: NodeJS.Signals) => void)[] = [];
    const onSignal: Deps['onSignal'] = (_signals, listener) => {
      listeners.push(listener);
      return () => listeners.splice(listeners.indexOf(listener), 1);
    };
    // The shell waits on a child of its own, which outlives it: svc must not wait for that one.
    const command = `cat > ${at('got')}; echo $$ > ${at('shell')}; sleep 60 & echo $! > ${at('sleeper')}; : > ${at('started')}; wait`;
    const running = svc(['keys', 'rotate', '--yes', old.id, '--to-command', command, '--on-delivery-failure', 'print'], local.env, { deps: { onSignal } });
    while (!existsSync(at('started'))) await new Promise((resolve) => setTimeout(resolve, 20));
    for (const listener of [...listeners]) listener('SIGINT');
    const result = await running;
    try {
      expect(result.exitCode).toBe(130);
      expect(result.stdout).toBe(readFileSync(at('got'), 'utf8'));
      expect(result.stderr).toContain('was stopped (interrupted)');
      expect(result.stderr).toContain(`The old key ${old.id} was left as it was.`);
      expect(() => process.kill(Number(readFileSync(at('shell'), 'utf8')), 0)).toThrow(/ESRCH/);
      expect([await ping(result.stdout), await ping(old.secret)]).toEqual([0, 0]);
    } finally {
      process.kill(Number(readFileSync(at('sleeper'), 'utf8')), 'SIGKILL');
    }
  });
});

const revokedId = (stderr: string) => /the new key (key_\w+), whose secret nobody saw, was revoked/.exec(stderr)![1]!;

/** A revoked key is gone: `keys view` finds none (exit 4). */
const gone = async (id: string) => (await svc(['keys', 'view', id], local.env)).exitCode === 4;

describe('a failed delivery where nobody sees the terminal (docs/contract.md §C9)', () => {
  it('stdout not a terminal: `exit 7` revokes the new key, prints no secret anywhere, names the key, and exits 1', async () => {
    const result = await svc(['keys', 'create', 'unseen', '--to-command', `cat > ${at('got')}; exit 7`], local.env);
    const secret = readFileSync(at('got'), 'utf8');
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toContain(secret);
    const id = revokedId(result.stderr);
    expect(result.stderr).toContain(`exited with status 7. It was not printed (--on-delivery-failure revoke): the new key ${id}, whose secret nobody saw, was revoked.`);
    expect(await ping(secret)).toBe(3);
    expect(await gone(id)).toBe(true);
  });

  it('a rotation keeps the old key, revokes the new one, and prints no secret', async () => {
    const old = await createKey('unseen-rotate');
    const result = await svc(['keys', 'rotate', old.id, '--yes', '--to-command', `cat > ${at('got')}; exit 7`], local.env);
    const secret = readFileSync(at('got'), 'utf8');
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toContain(secret);
    expect(result.stderr).toContain(`The old key ${old.id} was left as it was.`);
    expect([await ping(secret), await ping(old.secret)]).toEqual([3, 0]);
  });

  it('with --json, the document printed has no secret', async () => {
    const result = await svc(['keys', 'create', 'unseen-json', '--json', '--to-command', `cat > ${at('got')}; exit 7`], local.env);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).not.toContain(readFileSync(at('got'), 'utf8'));
    // The record is the create's answer; beside it, what became of the key since.
    expect(JSON.parse(result.stdout)).toMatchObject({ key: { name: 'unseen-json' }, delivered: [], revoked: true });
    const old = await createKey('unseen-json-rotate');
    const rotated = await svc(['keys', 'rotate', old.id, '--yes', '--json', '--to-command', `cat > ${at('got')}; exit 7`], local.env);
    expect(rotated.exitCode).toBe(1);
    expect(rotated.stdout).not.toContain(readFileSync(at('got'), 'utf8'));
    expect(JSON.parse(rotated.stdout)).toMatchObject({ key: { name: 'unseen-json-rotate' }, delivered: [], previous: null, revoked: true });
  });

  it("what the command prints goes to svc's stderr with the secret, and any piece of it, masked: `cat` puts nothing secret in a log", async () => {
    for (const command of ['cat', 'cat >&2', 'fold -w 40']) {
      const result = await svc(['keys', 'create', `echoed-${command.length}`, '--to-command', command], { ...local.env, CI: 'true' });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stderr).not.toMatch(/sk_[A-Za-z0-9]{12}/);
      expect(result.stderr).toMatch(/sk_[A-Za-z0-9]{4}…[A-Za-z0-9]{4}/);
    }
  });

  it("on GitHub Actions svc registers the secret with the runner before the command gets it, and the command's own ::add-mask:: line passes whole", async () => {
    const command = `read -r k; echo "::add-mask::$k"; echo "got $k"`;
    const result = await svc(['keys', 'create', 'actions-delivered', '--to-command', command], { ...local.env, GITHUB_ACTIONS: 'true', CI: 'true' });
    expect(result.exitCode, result.stderr).toBe(0);
    const secret = /^::add-mask::(sk_[A-Za-z0-9]{64})$/m.exec(result.stderr)![1]!;
    const lines = result.stderr.split('\n');
    expect(lines.filter((line) => line.includes(secret))).toEqual([`::add-mask::${secret}`, `::add-mask::${secret}`]);
    expect(lines).toContain(`got ${keyHint(secret)}`);
    expect(lines.findIndex((line) => line.includes(secret))).toBeLessThan(lines.findIndex((line) => line.startsWith('got ')));
  });

  it('on a terminal the secret is printed as before; with CI set, or --on-delivery-failure revoke, it is not', async () => {
    const shown = await svc(['keys', 'create', 'seen', '--to-command', 'exit 7'], local.env, { tty: true });
    expect(shown.exitCode).toBe(1);
    const secret = /sk_[A-Za-z0-9]{64}/.exec(shown.stdout)![0];
    expect(await ping(secret)).toBe(0);
    for (const [env, flags] of [[{ CI: 'true' }, []], [{}, ['--on-delivery-failure', 'revoke']]] as const) {
      const result = await svc(['keys', 'create', 'seen', '--to-command', `cat > ${at('got')}; exit 7`, ...flags], { ...local.env, ...env }, { tty: true });
      expect(result.exitCode).toBe(1);
      expect(result.stdout).not.toMatch(/sk_/);
      expect(await ping(readFileSync(at('got'), 'utf8'))).toBe(3);
    }
  });

  it('--on-delivery-failure without --to-file or --to-command is a usage error; an unknown value too', async () => {
    expect((await svc(['keys', 'create', 'nowhere', '--on-delivery-failure', 'print'], local.env)).exitCode).toBe(2);
    expect((await svc(['keys', 'create', 'nowhere', '--to-command', 'cat', '--on-delivery-failure', 'keep'], local.env)).exitCode).toBe(2);
    expect(await keyIds('nowhere')).toEqual([]);
  });
});

describe('a delivery is the whole secret read (docs/contract.md §C9)', () => {
  // `true` and `head -c 10` exit 0 without reading it all; the bytes left in stdin say so.
  for (const command of ['true', 'head -c 10 >/dev/null']) {
    it(`\`${command}\` exits 0 unread: a failed delivery, the key revoked`, async () => {
      const result = await svc(['keys', 'create', 'unread', '--to-command', command], local.env);
      expect(result.exitCode).toBe(1);
      expect(result.stderr).toContain(command === 'true' ? 'exited with status 0 without reading the secret' : 'having read only 10 of its 67 characters');
      expect(await gone(revokedId(result.stderr))).toBe(true);
    });
  }

  // Read to the end, now or after a while: delivered.
  for (const command of ['cat >', 'sleep 0.2; cat >']) {
    it(`\`${command} file\` reads it all: delivered`, async () => {
      const result = await svc(['keys', 'create', 'read', '--to-command', `${command} ${at('got')}`], local.env);
      expect(result.exitCode).toBe(0);
      expect(await ping(readFileSync(at('got'), 'utf8'))).toBe(0);
    });
  }

  it('`exit 7` without reading: its status is the reason given', async () => {
    const result = await svc(['keys', 'create', 'exit-7', '--to-command', 'exit 7'], local.env);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('`exit 7` exited with status 7.');
  });
});

describe('the built svc, as a process of its own', () => {
  it('a relative --to-file from a working directory that was removed is a usage error before any key is made', async () => {
    const gone = at('gone');
    mkdirSync(gone);
    // A shell in the directory removes it, then becomes svc there.
    const result = await execa('sh', ['-c', 'rmdir "$PWD" && exec node "$0" keys create orphaned-cwd --to-file .env', SVC_BIN], {
      cwd: gone,
      env: cleanEnv(local.env),
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
    });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('.env is relative, and the working directory no longer exists: give an absolute path');
    expect(await keyIds('orphaned-cwd')).toEqual([]);
  });

  it('delivers to a command; a SIGTERM while the command runs, where stdout is no terminal, revokes the new key unprinted and ends by SIGTERM', async () => {
    const delivered = await svcProcess(['keys', 'create', 'built', '--to-command', `cat > ${at('got')}`], local.env);
    expect(delivered.exitCode).toBe(0);
    expect(delivered.stdout).toBe('');
    expect(await ping(readFileSync(at('got'), 'utf8'))).toBe(0);

    const command = `cat > ${at('stopped')}; sleep 60 & echo $! > ${at('sleeper')}; : > ${at('started')}; wait`;
    const child = svcProcess(['keys', 'create', 'built-stopped', '--to-command', command], local.env);
    try {
      while (!existsSync(at('started'))) await new Promise((resolve) => setTimeout(resolve, 20));
      child.kill('SIGTERM');
      const result = await child;
      expect(result.signal).toBe('SIGTERM');
      const secret = readFileSync(at('stopped'), 'utf8');
      expect(result.stdout).toBe('');
      expect(result.stderr).not.toContain(secret);
      expect(result.stderr).toContain('whose secret nobody saw, was revoked');
      expect(await ping(secret)).toBe(3);
    } finally {
      process.kill(Number(readFileSync(at('sleeper'), 'utf8')), 'SIGKILL');
    }
  });
});

describe.skipIf(!canMount)('--to-file on a file system that refuses the write (needs root to mount a tmpfs; skipped when not root)', () => {
  const mount = canMount ? mountTmpfs('64k') : null;
  afterAll(() => mount?.unmount());

  it('the create is shown after all (exit 1), and a rotation leaves the old key', async () => {
    mount!.readOnly();
    const path = join(mount!.dir, '.env');
    const created = await svc(['keys', 'create', 'read-only', '--to-file', path, '--on-delivery-failure', 'print'], local.env);
    expect(created.exitCode).toBe(1);
    expect(created.stderr).toContain(`The new secret could not be delivered: writing ${path} failed`);
    expect(await ping(created.stdout)).toBe(0);
    const old = await createKey('read-only-rotate');
    const rotated = await svc(['keys', 'rotate', '--yes', old.id, '--to-file', path, '--on-delivery-failure', 'print'], local.env);
    expect(rotated.exitCode).toBe(1);
    expect([await ping(rotated.stdout), await ping(old.secret)]).toEqual([0, 0]);
    expect(existsSync(path)).toBe(false);
  });
});

describe('a signal while svc revokes a new key whose secret nobody has', () => {
  const failedDelivery = ['keys', 'create', 'unseen', '--to-command', 'cat >/dev/null; exit 3', '--on-delivery-failure', 'revoke'];

  it('the first is waited through: the key is revoked, said so, and the exit code is the signal\'s', async () => {
    const result = await svc(failedDelivery, local.env, { deps: signalsAt(atNth('DELETE', 1, ['SIGTERM'])) });
    expect(result.exitCode, result.stderr).toBe(143);
    expect(result.stderr).toMatch(/Revoking the new key key_\w+ before stopping: nobody has its secret \(SIGTERM again to stop at once\)\./);
    expect(result.stderr).toMatch(/the new key key_\w+, whose secret nobody saw, was revoked/);
    expect(await keyIds('unseen')).toEqual([]);
  });

  it('a second stops at once, naming the key and the command that revokes it', async () => {
    const rule = await call(local.server.url, 'POST', '/_local/faults', local.server.adminToken, { rules: [{ method: 'DELETE', times: 1, delayMs: 3_000 }] });
    expect(rule.status).toBe(201);
    const result = await svc([...failedDelivery.slice(0, 2), 'unseen-twice', ...failedDelivery.slice(3)], local.env, {
      deps: signalsAt(atNth('DELETE', 1, ['SIGHUP', 'SIGINT'])),
    });
    expect(result.exitCode).toBe(129);
    const id = /the new key, whose secret nobody saw, could not be revoked: stopped by SIGINT before its revoke was done\.\nRevoke it: svc keys revoke (key_\w+)/.exec(result.stderr);
    expect(id, result.stderr).not.toBeNull();
  });
});
