import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SVC_BIN, call, startLocalServer, svc, useLocalServer, windowEndsIn, type LocalServer } from '../helpers/cli.js';
import { Terminal } from '../helpers/terminal.js';

const local = useLocalServer(['--plan', 'pro']);
let term: Terminal | undefined;

afterEach(async () => {
  await term?.close();
  term = undefined;
});

const env = (key = local.server.apiKey!) => ({ ...local.env, SVC_API_KEY: key, NO_COLOR: '1' });

/** The menu is ready for keys once its live prompt (not an answered one) is drawn. */
const MENU = /\? What next\? \(Esc to quit\)\n❯ Create a key/;

async function startSession(key?: string): Promise<Terminal> {
  term = await Terminal.start(['node', SVC_BIN], env(key), { columns: 80, rows: 50 });
  await term.waitFor(MENU);
  return term;
}

describe('svc with no command on a terminal', () => {
  it('creates, disables, rotates and revokes a key, then quits', async () => {
    const t = await startSession();
    const first = await t.screen();
    expect(first).toContain('profile default');
    expect(first).toMatch(/workspace .* plan pro, 1000 requests\/min/);
    expect(first).toMatch(/\* key_\w+\s+bootstrap/);
    expect(Math.max(...first.split('\n').map((l) => [...l].length))).toBeLessThanOrEqual(80);

    await t.send('Enter');
    await t.waitFor('Name for the new key:');
    await t.send('tty-key', 'Enter');
    await t.waitFor('Expires in');
    await t.send('7d', 'Enter');
    let screen = await t.waitFor('only time this secret is shown');
    expect(screen).toMatch(/Created key 'tty-key' \(key_\w+\), expires in 1 week/);
    expect(screen).toMatch(/sk_[A-Za-z0-9]{64}/);
    await t.waitFor(MENU);

    await t.send('Down', 'Enter');
    await t.waitFor('Key to switch on or off:');
    await t.send('tty-key');
    await t.waitFor(/❯ tty-key/);
    await t.send('Enter');
    await t.waitFor(/Disabled key_\w+ \(tty-key\)/);
    await t.waitFor(/tty-key\s+sk_\S+\s+disabled/);
    await t.waitFor(MENU);

    await t.send('Down', 'Down', 'Down', 'Enter');
    await t.waitFor('Key to rotate:');
    await t.send('tty-key');
    await t.waitFor(/❯ tty-key/);
    await t.send('Enter');
    screen = await t.waitFor(/Revoked the old key key_\w+; key_\w+ replaces it/);
    expect(screen).toContain('only time this secret is shown');
    await t.waitFor(MENU);

    await t.send('Down', 'Down', 'Enter');
    await t.waitFor('Key to revoke:');
    await t.send('tty-key');
    await t.waitFor(/❯ tty-key/);
    await t.send('Enter');
    await t.waitFor(/Revoke 'tty-key' \(key_\w+\)\? This cannot be undone/);
    await t.send('y', 'Enter');
    await t.waitFor(/Revoked key_\w+\./);
    await t.waitFor(MENU);

    await t.send('Up', 'Enter');
    expect(await t.exitCode()).toBe(0);
    const listed = await svc(['keys', 'list', '--json'], env());
    expect(listed.stderr).toBe('');
    const keys = JSON.parse(listed.stdout).keys;
    expect(keys.map((k: { name: string }) => k.name)).toEqual(['bootstrap']);
  });

  it('asks twice before disabling the key in use, then ends with the 401 message', async () => {
    const own = JSON.parse((await svc(['keys', 'create', 'session-key', '--json'], env())).stdout);
    const t = await startSession(own.secret);
    await t.send('Down', 'Enter');
    await t.waitFor('Key to switch on or off:');
    await t.send('session-key');
    await t.waitFor(/❯ session-key .*← in use/);
    await t.send('Enter');
    await t.waitFor(`Disable 'session-key' (${own.id})?`);
    await t.send('y', 'Enter');
    await t.waitFor('locks the session out. Go ahead?');
    await t.send('y', 'Enter');
    const screen = await t.waitFor('unknown, disabled, expired or revoked');
    expect(screen).toContain(`key:    sk_${own.secret.slice(3, 7)}…${own.secret.slice(-4)} from the SVC_API_KEY environment variable`);
    expect(screen).not.toContain('(none)');
    expect(await t.exitCode()).toBe(3);
  });

  it('Esc at the menu leaves with exit 0', async () => {
    const t = await startSession();
    await t.send('Escape');
    expect(await t.exitCode()).toBe(0);
  });

  it('Ctrl-C at the menu leaves with exit 0; inside an action with 130', async () => {
    let t = await startSession();
    await t.send('C-c');
    expect(await t.exitCode()).toBe(0);
    await t.close();

    t = await startSession();
    await t.send('Enter');
    await t.waitFor('Name for the new key:');
    await t.send('C-c');
    expect(await t.exitCode()).toBe(130);
  });

  it('svc keys with no subcommand opens the same session', async () => {
    term = await Terminal.start(['node', SVC_BIN, 'keys'], env(), { columns: 80, rows: 50 });
    await term.waitFor(MENU);
    await term.send('Up', 'Enter');
    expect(await term.exitCode()).toBe(0);
  });
});

describe('the session under pressure', () => {
  let free: LocalServer;
  beforeAll(async () => {
    free = await startLocalServer();
  });
  afterAll(() => free?.stop());

  it('shows the rate-limit countdown and carries on', async () => {
    await windowEndsIn(free, 4);
    const t = await Terminal.start(['node', SVC_BIN], { ...env(free.apiKey!), SVC_BASE_URL: free.url }, { columns: 80, rows: 50 });
    term = t;
    await t.waitFor(MENU);
    while ((await call(free.url, 'GET', '/api/service/workspace', free.apiKey!)).status !== 429);
    await t.send('Down', 'Down', 'Down', 'Down', 'Down', 'Enter');
    await t.waitFor(/Rate limited: retrying in \d s/);
    await t.waitFor(MENU, 15_000);
    await t.send('Up', 'Enter');
    expect(await t.exitCode()).toBe(0);
  });

  it('redraws the table to fit after the terminal shrinks', async () => {
    const t = await startSession();
    await t.resize(60, 50);
    await t.send('Down', 'Down', 'Down', 'Down', 'Down', 'Enter');
    await t.waitFor(/Refresh\n[\s\S]*\? What next\?/);
    const screen = await t.screen();
    const table = screen.slice(screen.lastIndexOf('ID '));
    const rows = table.split('\n').filter((line) => /^(ID|\*? *key_)/.test(line.trim()));
    expect(rows.length).toBeGreaterThan(1);
    for (const row of rows) expect([...row].length).toBeLessThanOrEqual(60);
  });
});

describe('svc with no command and nobody to ask', () => {
  it('prints help on stderr and exits 2 at once without a TTY', async () => {
    const started = Date.now();
    const result = await svc([], env());
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('Usage: svc');
    expect(Date.now() - started).toBeLessThan(5000);
    const keys = await svc(['keys'], env());
    expect(keys.exitCode).toBe(2);
    expect(keys.stderr).toContain('Usage: svc keys');
  });

  it('does the same on a terminal with CI set or --no-input', async () => {
    term = await Terminal.start(['node', SVC_BIN], { ...env(), CI: 'true' });
    await term.waitFor('Usage: svc');
    expect(await term.exitCode()).toBe(2);
    await term.close();
    term = await Terminal.start(['node', SVC_BIN, '--no-input'], env());
    await term.waitFor('Usage: svc');
    expect(await term.exitCode()).toBe(2);
  });
});
