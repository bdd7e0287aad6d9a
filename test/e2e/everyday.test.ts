// tier: process
/**
 * The everyday path as a new user meets it (issue 25), where only a
 * process or a real terminal shows it: `npm start`'s next steps run as
 * printed, a hung request's progress line, the lost create's explanation
 * before its question, a 40-column terminal, help at the terminal's width.
 */
import { execa } from 'execa';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SVC_BIN, call, cleanEnv, tempConfigDir, useLocalServer } from '../helpers/cli.js';
import { startSpecServer } from '../helpers/spec-server.js';
import { Terminal } from '../helpers/terminal.js';

const repo = dirname(dirname(SVC_BIN));
const fold = (text: string) => text.replace(/\s+/g, ' ');
const local = useLocalServer(['--plan', 'pro', '--admin-token', 'local-admin']);
let term: Terminal | undefined;

afterEach(async () => {
  await term?.close();
  term = undefined;
});

/** `svc serve --local` as `npm start` runs it (`node bin/svc.js`, from the clone), until its banner is out; then stopped. */
async function banner(command: string[], cwd: string, env: Record<string, string | undefined> = {}): Promise<string> {
  const child = execa(command[0]!, [...command.slice(1), 'serve', '--local', '--port', '0'], { cwd, env: cleanEnv(env), extendEnv: false, reject: false });
  let stderr = '';
  await new Promise<void>((resolve) => {
    child.stderr!.on('data', (chunk) => {
      stderr += String(chunk);
      if (stderr.includes('Ctrl-C stops the server.')) resolve();
    });
  });
  child.kill('SIGTERM');
  await child;
  return stderr;
}

describe("npm start's next steps", () => {
  it('from a clone are `node bin/svc.js …`, and they work as printed, from there', async () => {
    const text = await banner(['node', 'bin/svc.js'], repo);
    expect(text).toContain(`Next, in another terminal, in ${repo}:`);
    expect(text).toContain('  node bin/svc.js status\n');
    expect(text).toContain('svc is not installed as a command; README.md, "Install", says how.');
    expect(text).not.toMatch(/^ {2}svc /m);
    // Each line runs as printed, in the directory named, against a server such as the banner's (this one, its key pasted into login).
    const bannerUrl = /listening on (\S+)/.exec(text)![1]!;
    const config = tempConfigDir();
    try {
      const env = { SVC_CONFIG_DIR: config.dir };
      const lines = text.split('\n').filter((l) => l.startsWith('  node bin/svc.js'));
      expect(lines[0]).toBe(`  node bin/svc.js login --with-key --base-url ${bannerUrl}`);
      for (const line of lines) {
        const words = line.trim().replace(bannerUrl, local.server.url).split(' ');
        const input = words.includes('login') ? local.server.apiKey! : '';
        const result = await execa(words[0]!, words.slice(1), { cwd: repo, env: cleanEnv(env), extendEnv: false, reject: false, input });
        expect(result.exitCode, `${line}: ${result.stderr}`).toBe(0);
      }
    } finally {
      config.remove();
    }
  });

  it('say `svc …` where svc is a command on the PATH', async () => {
    const bin = mkdtempSync(join(tmpdir(), 'svc-path-'));
    try {
      symlinkSync(SVC_BIN, join(bin, 'svc'));
      const text = await banner(['svc'], tmpdir(), { PATH: `${bin}:${process.env.PATH}` });
      expect(text).toContain('Next, in another terminal:\n');
      expect(text).toContain('  svc status\n');
      expect(text).not.toContain('not installed');
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });
});

describe('on a terminal', () => {
  const env = () => ({ ...local.env, NO_COLOR: '1' });
  const fault = (rule: Record<string, unknown>) => call(local.server.url, 'POST', '/_local/faults', 'local-admin', { rules: [rule] });

  it('a request that hangs shows what svc waits for, counted, and the line is gone once it ends', async () => {
    await fault({ method: 'GET', path: '/user/api-keys', then: 'hang' });
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'list', '--timeout', '2500'], env(), { columns: 80, rows: 20 });
    await term.waitFor(/Waiting for http:\/\/127\.0\.0\.1:\d+ \(1 s\)/);
    expect(await term.exitCode()).toBe(0);
    const screen = await term.screen();
    expect(screen).not.toContain('Waiting for');
    expect(screen).toContain('Request failed (no answer within 2500 ms); retrying in');
    expect(screen).toMatch(/^ID +NAME/m);
  });

  it('a create whose answer svc cannot read explains itself before asking, and says it once', async () => {
    // A 201 that is not JSON may hold the secret, so the key svc made is offered for revoke rather than revoked (docs/contract.md §C4).
    const spec = await startSpecServer();
    try {
      // Not JSON, but holding what may be the secret: only such an answer is shown and its key offered, not revoked.
      spec.rules.push({ method: 'POST', times: 1, then: { status: 201, body: `created; the secret follows: sk_${'x'.repeat(64)}\n` } });
      const specEnv = { ...env(), SVC_BASE_URL: spec.url, SVC_API_KEY: spec.apiKey };
      term = await Terminal.start(['node', SVC_BIN, 'keys', 'create', 'lost-on-tty', '--expires-in', '30d'], specEnv, { columns: 100, rows: 30 });
      const asking = await term.waitFor('? Revoke it now?');
      // Long messages break between words to fit the terminal: what they say is read with white space folded.
      const before = fold(asking.slice(0, asking.indexOf('? Revoke it now?')));
      expect(before).toContain('created; the secret follows');
      expect(before).toContain('answered 201 with JSON that does not parse');
      expect(before).toMatch(/It did take effect: a key named 'lost-on-tty' appeared since the request began/);
      expect(before).toMatch(/\w+ created \S+ revoke it: svc keys revoke \w+/);
      await term.send('n', 'Enter');
      expect(await term.exitCode()).toBe(1);
      const screen = await term.screen();
      const after = fold(screen.slice(screen.indexOf('Revoke it now?')));
      expect(after).toMatch(/error: The create failed: \w+, the key it made, was left as it is \(svc keys revoke \w+ revokes it\)\./);
      expect(after).not.toContain('201');
      expect([...spec.keys.values()].filter((k) => k.name === 'lost-on-tty')).toHaveLength(1);
    } finally {
      await spec.close();
    }
  });

  it('a create whose answer was lost, on a terminal: svc revokes the key its expiry tells for its own, asking nothing', async () => {
    await fault({ method: 'POST', path: '/user/api-keys', status: 503, after: true });
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'create', 'lost-and-revoked', '--expires-in', '30d'], env(), { columns: 100, rows: 30 });
    expect(await term.exitCode()).toBe(1);
    const screen = fold(await term.screen());
    expect(screen).toContain('POST /user/api-keys failed (503');
    expect(screen).toMatch(/key_\w+ created \S+ revoked now: nobody could use it/);
    expect(screen).not.toContain('Revoke it now?');
  });

  it('at 40 columns keys list leaves out the columns that do not fit instead of wrapping rows', async () => {
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'list'], env(), { columns: 40, rows: 30 });
    expect(await term.exitCode()).toBe(0);
    const [header, ...rows] = (await term.screen()).split('\n').filter((line) => line.trim() !== '');
    // The id and the name, cut to fit; every other column left out, and no row wrapped onto a second line.
    expect(header).toMatch(/^ID +NAME$/);
    expect(rows.at(-1)).toBe('* the key svc is using');
    for (const row of rows.slice(0, -1)) expect(row).toMatch(/^[* ] key_\w+ +\S.*$/);
    for (const line of [header!, ...rows]) expect(line.length).toBeLessThanOrEqual(40);
  });

  it('--help wraps at the terminal width, between words', async () => {
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'rotate', '--help'], env(), { columns: 60, rows: 80 });
    expect(await term.exitCode()).toBe(0);
    const lines = (await term.screen()).split('\n');
    // An example command is kept whole, to be copied as it is; the terminal folds it.
    for (const line of lines.filter((l) => !l.startsWith('  $ '))) expect(line.length, line).toBeLessThanOrEqual(60);
    // No word is broken across lines: every word of the options' help is whole on some line.
    const text = lines.join('\n');
    expect(text).toMatch(/per-request timeout in\s+milliseconds|per-request timeout in milliseconds/);
    expect(text).not.toMatch(/\beout in\b/);
  });
});
