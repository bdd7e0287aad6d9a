// tier: process
/**
 * Abort means abort (issue 22, docs/contract.md §C7–C8), on a real terminal
 * and with real signals: Ctrl-C at any question of a command ends it with
 * 130 and nothing after the question is done, which the server's request
 * log and `svc keys list` show; declining to save a rotation's new key never
 * leaves the profile with a revoked key; and a SIGINT while a create is out
 * waits for the secret, or with a second one stops at once saying how to
 * find the key that may have been made.
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SVC_BIN, svc } from '../helpers/cli.js';
import { cleanEnv } from '../helpers/env.js';
import { useFaultyServer } from '../helpers/reference-faults.js';
import { startSpecServer } from '../helpers/spec-server.js';
import { Terminal } from '../helpers/terminal.js';

const server = useFaultyServer();
let term: Terminal | undefined;

afterEach(async () => {
  await term?.close();
  term = undefined;
});

interface Listed {
  id: string;
  name: string;
  hint: string;
  status: string;
}

/** The env of a profile of its own, with no SVC_API_KEY: the command uses (and may change) what the profile holds. */
const profileEnv = (profile: string) => ({ SVC_CONFIG_DIR: server.env.SVC_CONFIG_DIR!, SVC_BASE_URL: server.env.SVC_BASE_URL!, SVC_PROFILE: profile });

async function create(name: string): Promise<{ id: string; secret: string }> {
  const result = await svc(['keys', 'create', name, '--json'], server.env);
  expect(result.exitCode, result.stderr).toBe(0);
  return JSON.parse(result.stdout).key;
}

async function named(name: string): Promise<Listed[]> {
  const result = await svc(['keys', 'list', '--json', '--name', name], server.env);
  expect(result.exitCode, result.stderr).toBe(0);
  return (JSON.parse(result.stdout).keys as Listed[]).filter((k) => k.name === name);
}

/**
 * The POSTs logged after the first `before` requests that no fault held: what an `svc api` create of this test
 * sent. A request an earlier test left held by a delay fault is logged when it ends, which may be during this one.
 */
async function postsSince(before: number) {
  return (await server.requests()).slice(before).filter((r) => r.method === 'POST' && r.fault === null);
}

/** Every request that could have changed something, oldest first: the test's own set-up, then what the command did. */
async function changes(): Promise<string[]> {
  return (await server.seen()).filter((line) => !line.startsWith('GET '));
}

const configText = () => {
  const file = join(server.env.SVC_CONFIG_DIR!, 'config.json');
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
};
const savedKey = (profile: string): string | undefined => JSON.parse(configText()).profiles[profile]?.apiKey;

const hintOf = (secret: string) => `sk_${secret.slice(3, 7)}…${secret.slice(-4)}`;

async function loggedIn(profile: string, name: string): Promise<{ id: string; secret: string }> {
  const own = await create(name);
  const login = await svc(['login', '--with-key'], profileEnv(profile), { input: own.secret });
  expect(login.exitCode, login.stderr).toBe(0);
  return own;
}

describe('Ctrl-C at a question ends the command there: exit 130, and nothing after the question is done', () => {
  it('keys rotate, at "Rotate …?": no key made, none revoked', async () => {
    const old = await create('turning');
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'rotate', old.id], server.env);
    await term.waitFor(`Rotate 'turning' (${old.id})?`);
    await term.send('C-c');
    expect(await term.exitCode()).toBe(130);
    expect(await changes()).toEqual(['POST /user/api-keys 201']);
    expect(await named('turning')).toMatchObject([{ id: old.id, status: 'enabled' }]);
  });

  it('keys rotate of the key the profile uses, at "Save the new key there?": not saved, the old key neither revoked nor disabled', async () => {
    const own = await loggedIn('ctrl-c-save', 'in-use');
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'rotate', own.id], profileEnv('ctrl-c-save'));
    await term.waitFor(`Rotate 'in-use' (${own.id})?`);
    await term.send('y', 'Enter');
    await term.waitFor('Save the new key there?');
    await term.send('C-c');
    expect(await term.exitCode()).toBe(130);
    const screen = await term.waitFor('Stopped: the new key');
    expect(screen).not.toContain('Saved the new key');
    expect(await changes()).toEqual(['POST /user/api-keys 201', 'POST /user/api-keys 201']);
    expect(savedKey('ctrl-c-save')).toBe(own.secret);
    const keys = await named('in-use');
    expect(keys.map((k) => k.status)).toEqual(['enabled', 'enabled']);
    expect(keys.map((k) => k.id)).toContain(own.id);
    expect((await svc(['keys', 'ping'], profileEnv('ctrl-c-save'))).exitCode).toBe(0);
  });

  it('keys revoke without an id, at the pick-list: nothing revoked', async () => {
    const key = await create('picked');
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'revoke'], server.env);
    await term.waitFor('Keys to revoke');
    await term.send('Tab', 'C-c');
    expect(await term.exitCode()).toBe(130);
    expect(await term.screen()).toContain('Cancelled; nothing was done.');
    expect(await changes()).toEqual(['POST /user/api-keys 201']);
    expect(await named('picked')).toMatchObject([{ id: key.id, status: 'enabled' }]);
  });

  it('keys revoke <id>, at "Revoke …?": nothing revoked', async () => {
    const key = await create('asked');
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'revoke', key.id], server.env);
    await term.waitFor(`Revoke 'asked' (${key.id})? This cannot be undone.`);
    await term.send('C-c');
    expect(await term.exitCode()).toBe(130);
    expect(await changes()).toEqual(['POST /user/api-keys 201']);
    expect(await named('asked')).toMatchObject([{ id: key.id, status: 'enabled' }]);
  });

  it('login, at the masked "API key:" with part of a key typed: nothing checked, nothing saved', async () => {
    const before = configText();
    term = await Terminal.start(['node', SVC_BIN, 'login'], profileEnv('ctrl-c-login'));
    await term.waitFor('API key:');
    await term.send(server.env.SVC_API_KEY!.slice(0, 30));
    await term.waitFor('*'.repeat(30));
    await term.send('C-c');
    expect(await term.exitCode()).toBe(130);
    expect(configText()).toBe(before);
    expect(await server.seen()).toEqual([]);
  });

  it('keys prune, at "Revoke …?": the matching key stays', async () => {
    const stale = await create('stale');
    expect((await svc(['keys', 'disable', stale.id], server.env)).exitCode).toBe(0);
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'prune', '--disabled'], server.env);
    await term.waitFor(`Revoke 'stale' (${stale.id})? This cannot be undone.`);
    await term.send('C-c');
    expect(await term.exitCode()).toBe(130);
    expect(await changes()).toEqual(['POST /user/api-keys 201', `PATCH /user/api-keys/${stale.id} 200`]);
    expect(await named('stale')).toMatchObject([{ id: stale.id, status: 'disabled' }]);
  });

  it("keys create whose answer svc could not read, at the offer to revoke the key it made: it stays, and the command that revokes it is named", async () => {
    const spec = await startSpecServer();
    try {
      // Not JSON, but holding what may be the secret: only such an answer is shown and its key offered, not revoked.
      spec.rules.push({ method: 'POST', times: 1, then: { status: 201, body: `created, but not as JSON: sk_${'x'.repeat(64)}\n` } });
      term = await Terminal.start(['node', SVC_BIN, 'keys', 'create', 'lost-answer', '--expires-in', '1d'], { ...server.env, SVC_BASE_URL: spec.url, SVC_API_KEY: spec.apiKey });
      await term.waitFor('Revoke it now?');
      await term.send('C-c');
      expect(await term.exitCode()).toBe(130);
      const [orphan, ...more] = [...spec.keys.values()].filter((k) => k.name === 'lost-answer');
      expect(more).toEqual([]);
      expect(orphan).toMatchObject({ enabled: true });
      await term.waitFor(`svc keys revoke ${orphan!.id}`);
      expect(spec.seen.filter((r) => !r.startsWith('GET '))).toEqual(['POST /api/service/user/api-keys']);
    } finally {
      await spec.close();
    }
  });
});

describe('declining to save a rotation\'s new key, in a profile other than the default', () => {
  it.each([
    ['', []],
    ['--disable-old', ['--disable-old']],
    ['--overlap', ['--overlap']],
  ])('keys rotate <id> %s: the profile keeps the old key, which still works; exit 1 naming the profile', async (_, flags) => {
    const profile = `p7${flags.join('')}`;
    const own = await loggedIn(profile, `declined${flags.join('')}`);
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'rotate', own.id, ...flags], profileEnv(profile));
    await term.waitFor(`Rotate 'declined${flags.join('')}' (${own.id})?`);
    await term.send('y', 'Enter');
    await term.waitFor('Save the new key there?');
    await term.send('n', 'Enter');
    expect(await term.exitCode()).toBe(1);
    await term.waitFor(`svc login --profile ${profile}`);
    expect(await changes()).toEqual(['POST /user/api-keys 201', 'POST /user/api-keys 201']);
    expect(JSON.parse(configText()).profiles[profile]).toMatchObject({ apiKey: own.secret });
    expect(JSON.parse(configText()).profiles[profile].pendingRotation).toBeUndefined();
    expect((await svc(['keys', 'ping'], profileEnv(profile))).exitCode).toBe(0);
  });
});

describe('SIGINT (kill -INT) while a create is held open by the server', () => {
  /**
   * svc with `args`, once its create has reached the server, which holds it for 3 s (the rule is then used up).
   * In an object: the child is a promise of its result, which an async function's return would wait for.
   */
  async function held(args: string[]) {
    await server.fault({ method: 'POST', path: '/user/api-keys', delayMs: 3000 });
    const child = svc(args, server.env);
    await expect.poll(async () => (await server.rules()).length).toBe(0);
    return { child };
  }

  /** A SIGINT, and once svc says it waits for the answer, a second one; then svc's result. */
  async function interruptedTwice(child: ReturnType<typeof svc>) {
    child.kill('SIGINT');
    let stderr = '';
    await new Promise<void>((resolve) =>
      child.stderr!.on('data', (chunk) => {
        stderr += String(chunk);
        if (stderr.includes('waiting for its answer')) resolve();
      }),
    );
    child.kill('SIGINT');
    return await child;
  }

  it('once: says it waits for the answer, prints the secret when it comes, then ends by SIGINT', async () => {
    const { child } = await held(['keys', 'create', 'held']);
    child.kill('SIGINT');
    const result = await child;
    expect(result.signal).toBe('SIGINT');
    expect(result.stderr).toContain('Interrupted while the create was out: waiting for its answer');
    expect(result.stderr).toContain('Stopped after the new key was made (shown above)');
    expect(result.stdout).toMatch(/^sk_[A-Za-z0-9]{64}$/);
    expect(await named('held')).toMatchObject([{ hint: hintOf(result.stdout), status: 'enabled' }]);
  });

  it('twice: stops without waiting for the answer, naming the command that finds the key, which then finds it', async () => {
    const result = await interruptedTwice((await held(['keys', 'create', 'given-up'])).child);
    expect(result.signal).toBe('SIGINT');
    // The answer holds the secret: had svc waited for it, the secret would be on stdout.
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("a key named 'given-up' may have been made, and nobody has seen its secret");
    expect(result.stderr).toContain('svc keys list --name given-up');
    await expect.poll(async () => (await svc(['keys', 'list', '--name', 'given-up', '--json'], server.env)).stdout).toContain('"name": "given-up"');
  });

  it('svc api, once: says it waits for the answer, prints it (the secret with it), then ends by SIGINT', async () => {
    const { child } = await held(['api', '/user/api-keys', '-f', 'name=api-held']);
    child.kill('SIGINT');
    const result = await child;
    expect(result.signal).toBe('SIGINT');
    expect(result.stderr).toContain('Interrupted while POST /user/api-keys was out: waiting for its answer');
    expect(result.stderr).toContain('Stopped after the answer came (shown above).');
    expect(JSON.parse(result.stdout)).toMatchObject({ name: 'api-held', secret: expect.stringMatching(/^sk_/) });
  });

  it('SIGTERM (a cancelled CI job) once: waits for the answer and prints the secret as for Ctrl-C, but ends by SIGTERM, not SIGINT', async () => {
    const { child } = await held(['keys', 'create', 'held-term']);
    child.kill('SIGTERM');
    const result = await child;
    expect(result.signal).toBe('SIGTERM');
    expect(result.stdout).toMatch(/^sk_[A-Za-z0-9]{64}$/);
  });

  it('svc api with a PATCH out: ends at once, as any command does (only a POST can answer a secret)', async () => {
    const { id } = await create('patched-while-out');
    await server.fault({ method: 'PATCH', path: `/user/api-keys/${id}`, delayMs: 3000 });
    const child = svc(['api', '-X', 'PATCH', `/user/api-keys/${id}`, '-F', 'enabled=false'], server.env);
    await expect.poll(async () => (await server.rules()).length).toBe(0);
    child.kill('SIGINT');
    const result = await child;
    expect(result.signal).toBe('SIGINT');
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toContain('waiting for its answer');
  });

  it('svc api, twice: stops without the answer, saying a key may have been made and how to find it', async () => {
    const result = await interruptedTwice((await held(['api', '/user/api-keys', '-f', 'name=api-given-up'])).child);
    expect(result.signal).toBe('SIGINT');
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('Stopped while POST /user/api-keys was out: the server may have made the change.');
    expect(result.stderr).toContain('svc keys list --name api-given-up');
  });
});

describe('svc api reading its body from a terminal', () => {
  // Read as a file, /dev/stdin held a worker thread in read(2) that the exit of Ctrl-C waited on until Ctrl-D.
  // /dev/tty is the same terminal under another device number (5,0): a terminal of its own, read the same way.
  for (const input of ['/dev/stdin', '/dev/fd/0', '-', '/dev/tty']) {
    it(`--input ${input}: says it waits for the body; Ctrl-C ends it at once with 130, nothing sent`, async () => {
      const before = (await server.requests()).length;
      term = await Terminal.start(['node', SVC_BIN, 'api', '/user/api-keys', '--input', input], server.env);
      await term.waitFor('then press Ctrl-D on a line of its own');
      await term.send('{"name":"never-sent"');
      await term.send('C-c');
      expect(await term.exitCode()).toBe(130);
      expect(await postsSince(before)).toEqual([]);
    });
  }

  for (const source of ['/dev/stdin', '/dev/tty']) {
    it(`-F name=@${source}: the same`, async () => {
      term = await Terminal.start(['node', SVC_BIN, 'api', '/user/api-keys', '-F', `name=@${source}`], server.env);
      await term.waitFor('then press Ctrl-D on a line of its own');
      await term.send('C-c');
      expect(await term.exitCode()).toBe(130);
    });
  }

  it('-F name=@/dev/tty with --no-input: reads nothing and exits 2 at once, nothing sent', async () => {
    const before = (await server.requests()).length;
    term = await Terminal.start(['node', SVC_BIN, 'api', '/user/api-keys', '-F', 'name=@/dev/tty', '--no-input'], server.env);
    expect(await term.exitCode()).toBe(2);
    expect((await term.screen()).replace(/\n */g, ' ')).toContain('/dev/tty is a terminal, and with --no-input svc waits for no one to type.');
    expect(await postsSince(before)).toEqual([]);
  });

  it('two fields from stdin: the second is refused (exit 2), nothing sent', async () => {
    const before = (await server.requests()).length;
    const result = await svc(['api', '/user/api-keys', '-F', 'name=@/dev/stdin', '-F', 'other=@/dev/stdin'], server.env, { input: 'piped' });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('stdin can be read only once; it is named twice.');
    expect(await postsSince(before)).toEqual([]);
  });

  it('stdin a directory: refused as a directory, as any --input or -F file that is one; nothing sent', async () => {
    const before = (await server.requests()).length;
    for (const args of [['--input', '/dev/stdin'], ['-F', 'name=@/dev/stdin']]) {
      const dir = openSync(tmpdir(), 'r');
      try {
        const child = spawn('node', [SVC_BIN, 'api', '/user/api-keys', ...args], { env: cleanEnv(server.env), stdio: [dir, 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
        const code = await new Promise((resolve) => child.once('close', resolve));
        expect(code, stderr).toBe(2);
        expect(stderr).toContain('/dev/stdin, which cannot be read: it is a directory.');
      } finally {
        closeSync(dir);
      }
    }
    expect(await postsSince(before)).toEqual([]);
  });

  it('--input /dev/stdin from a pipe: read as stdin, without the line for a person', async () => {
    const result = await svc(['api', '/user/api-keys', '--input', '/dev/stdin'], server.env, { input: '{"name":"piped-body"}' });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('Ctrl-D');
    expect(JSON.parse(result.stdout)).toMatchObject({ name: 'piped-body' });
    await svc(['keys', 'revoke', JSON.parse(result.stdout).id, '--yes'], server.env);
  });
});

describe('svc api reading its body from a pipe named by its path', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-fifo-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  let made = 0;
  /** A named pipe nobody has opened yet. */
  function fifo(): string {
    const path = join(dir, `body-${++made}`);
    execFileSync('mkfifo', [path]);
    return path;
  }

  /** Resolves once `pid` holds `path` open: svc is waiting on it. */
  async function holding(pid: number, path: string): Promise<void> {
    await expect
      .poll(() => readdirSync(`/proc/${pid}/fd`).some((fd) => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`) === path;
        } catch {
          return false;
        }
      }), { timeout: 30_000, interval: 50 })
      .toBe(true);
  }

  // Read as a file, open(2) held a worker thread until a writer came, and the exit of Ctrl-C waited on it.
  it('--input FIFO with no writer: Ctrl-C ends it at once, by SIGINT, nothing sent', async () => {
    const path = fifo();
    const before = (await server.requests()).length;
    const child = spawn('node', [SVC_BIN, 'api', '/user/api-keys', '--input', path], { env: cleanEnv(server.env), stdio: ['ignore', 'pipe', 'pipe'] });
    const closed = new Promise<NodeJS.Signals | null>((resolve) => child.once('close', (_code, signal) => resolve(signal)));
    await holding(child.pid!, path);
    child.kill('SIGINT');
    expect(await closed).toBe('SIGINT');
    expect(await postsSince(before)).toEqual([]);
  });

  it('--input FIFO and -F @FIFO: the body comes once a writer writes and closes it', async () => {
    for (const args of [['--input'], ['-F', 'name=@']]) {
      const path = fifo();
      const body = args[0] === '--input' ? '{"name":"through-fifo"}' : 'through-fifo-field';
      const child = spawn('node', [SVC_BIN, 'api', '/user/api-keys', ...(args.length === 1 ? [args[0]!, path] : [args[0]!, `${args[1]}${path}`])], {
        env: cleanEnv(server.env),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout!.on('data', (chunk) => (stdout += String(chunk)));
      const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
      await holding(child.pid!, path);
      writeFileSync(path, body);
      expect(await closed).toBe(0);
      const made = JSON.parse(stdout);
      expect(made.name).toBe(args[0] === '--input' ? 'through-fifo' : 'through-fifo-field');
      await svc(['keys', 'revoke', made.id, '--yes'], server.env);
    }
  });

  it('the same pipe named twice, however spelt: refused at once (exit 2), before either is read; nothing sent', async () => {
    const path = fifo();
    symlinkSync(path, join(dir, 'link'));
    const before = (await server.requests()).length;
    for (const [second, said] of [
      [path, `${path} can be read only once; it is named twice.`],
      [`${dir}/./${basename(path)}`, `${dir}/./${basename(path)} can be read only once; it is named twice (as ${path}).`],
      [join(dir, 'link'), `${join(dir, 'link')} can be read only once; it is named twice (as ${path}).`],
    ] as const) {
      // No writer ever comes: a check made only after the first read would wait here for ever.
      const result = await svc(['api', '/user/api-keys', '-F', `name=@${path}`, '-F', `other=@${second}`], server.env);
      expect(result.exitCode).toBe(2);
      expect(result.stderr.replace(/\n */g, ' ')).toContain(said);
    }
    expect(await postsSince(before)).toEqual([]);
  });

  it('a pipe with no writer, then a file that is not there: the file is reported at once (exit 2), nothing sent', async () => {
    const path = fifo();
    const missing = join(dir, 'missing.json');
    const before = (await server.requests()).length;
    const result = await svc(['api', '/user/api-keys', '-F', `name=@${path}`, '-F', `other=@${missing}`], server.env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr.replace(/\n */g, ' ')).toContain(`-F names ${missing}, which cannot be read: there is no such file.`);
    expect(await postsSince(before)).toEqual([]);
  });

  it('a socket named as a file: says there is nothing to read from (exit 2)', async () => {
    const path = join(dir, 'sock');
    const listener = createServer().listen(path);
    await once(listener, 'listening');
    try {
      const result = await svc(['api', '/user/api-keys', '--input', path], server.env);
      expect(result.exitCode).toBe(2);
      expect(result.stderr.replace(/\n */g, ' ')).toContain(`--input names ${path}, which cannot be read: nothing is there to read from`);
    } finally {
      listener.close();
    }
  });

  it("a shell's <(…): read as the pipe it is", async () => {
    const result = await execa('bash', ['-c', `node ${JSON.stringify(SVC_BIN)} api /user/api-keys --input <(printf '{"name":"from-substitution"}')`], {
      env: cleanEnv(server.env),
      extendEnv: false,
      reject: false,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('Ctrl-D');
    const made = JSON.parse(result.stdout);
    expect(made.name).toBe('from-substitution');
    await svc(['keys', 'revoke', made.id, '--yes'], server.env);
  });
});
