// tier: process
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SVC_BIN, call, startLocalServer, svc, tempConfigDir, useLocalServer, windowEndsIn, type LocalServer } from '../helpers/cli.js';
import { SCREEN_WAIT_MS, Terminal } from '../helpers/terminal.js';

const local = useLocalServer(['--plan', 'pro']);
let term: Terminal | undefined;

afterEach(async () => {
  await term?.close();
  term = undefined;
});

const env = (key = local.server.apiKey!) => ({ ...local.env, SVC_API_KEY: key, NO_COLOR: '1' });
/** Nothing listens on port 9 (discard): the connection is refused at once. */
const DOWN = 'http://127.0.0.1:9';

/** The menu is ready for keys once its live prompt (not an answered one) is drawn. */
const MENU = /\? What next\? \(Esc to quit\)\n❯ Create a key/;
/** The menu of a session without a working key, on its default choice. */
const MENDING_MENU = /\? What next\? \(Esc to quit\)\n(.*\n)*?❯ Log in/;
const SECRET = /sk_[A-Za-z0-9]{64}/;
const PAUSE = 'Stored it? Press Enter to clear the secret from the screen.';

async function startSession(key?: string, args: string[] = [], extraEnv: Record<string, string> = {}): Promise<Terminal> {
  term = await Terminal.start(['node', SVC_BIN, ...args], { ...env(key), ...extraEnv }, { columns: 80, rows: 50 });
  await term.waitFor(MENU);
  return term;
}

/** From the menu, "Create a key" named `name` with the expiry `expires` (Enter alone: never), up to the pause that shows its secret; the screen then. */
async function createUntilPause(t: Terminal, name: string, expires?: string): Promise<string> {
  await t.send('Enter');
  await t.waitFor('Name for the new key:');
  await t.send(name, 'Enter');
  await t.waitFor('Expires in');
  await t.send(...(expires === undefined ? [] : [expires]), 'Enter');
  return t.waitFor(PAUSE);
}

/** How many times a text occurs on the screen. */
const count = (screen: string, text: string) => screen.split(text).length - 1;

/** Exactly `n` lines of "Cancelled." on the screen, the last one right above the screen drawn again, with its menu ready. */
const cancelledTimes = (n: number) => {
  const other = '(?:(?!Cancelled\\.)[\\s\\S])*';
  return new RegExp(`^${other}(?:Cancelled\\.\\n${other}){${n - 1}}Cancelled\\.\\n\\nsvc {2}profile [^\\n]*\\n${other}\\? What next\\? \\(Esc to quit\\)\\n❯ Create a key`);
};

describe('svc with no command on a terminal', () => {
  it('creates, disables, rotates and revokes a key, then quits', async () => {
    const t = await startSession();
    const first = await t.screen();
    expect(first).toContain('profile default');
    expect(first).toMatch(/workspace .* plan pro, 1000 requests\/min/);
    expect(first).toMatch(/\* key_\w+\s+bootstrap/);
    expect(Math.max(...first.split('\n').map((l) => [...l].length))).toBeLessThanOrEqual(80);

    /** Long messages break between words to fit the terminal; what they say is read with white space folded. */
    const fold = (text: string) => text.replace(/\s+/g, ' ');
    let screen = await createUntilPause(t, 'tty-key', '7d');
    expect(fold(screen)).toMatch(/Created key 'tty-key' \(key_\w+\), expires in 1 week/);
    expect(screen).toMatch(SECRET);
    expect(screen).toContain('only time this secret is shown');
    await t.send('Enter');
    await t.waitFor(MENU);

    await t.send('Down', 'Enter');
    await t.waitFor('Key to switch on or off:');
    await t.send('tty-key');
    await t.waitFor(/❯ tty-key/);
    await t.send('Enter');
    await t.waitFor(/Disable 'tty-key' \(key_\w+\)\?/);
    await t.send('y', 'Enter');
    await t.waitFor(/Disabled key_\w+ \(tty-key\)/);
    await t.waitFor(/tty-key\s+sk_\S+\s+disabled/);
    await t.waitFor(MENU);

    await t.send('Down', 'Down', 'Down', 'Enter');
    await t.waitFor('Key to rotate:');
    await t.send('tty-key');
    await t.waitFor(/❯ tty-key/);
    await t.send('Enter');
    await t.waitFor("Rotate 'tty-key' (key_");
    await t.waitFor('A new key replaces it and the old one is revoked; this cannot be undone.');
    await t.send('y', 'Enter');
    screen = await t.waitFor(PAUSE);
    expect(fold(screen)).toMatch(/Revoked the old key key_\w+; key_\w+ replaces it/);
    expect(screen).toMatch(SECRET);
    await t.send('Enter');
    await t.waitFor(MENU);

    await t.send('Down', 'Down', 'Enter');
    await t.waitFor('Keys to revoke:');
    await t.send('tty-key');
    await t.waitFor(/❯◯ tty-key/);
    await t.send('Enter');
    await t.waitFor(/Revoke 'tty-key' \(key_\w+\)\? This cannot be undone/);
    await t.send('y', 'Enter');
    await t.waitFor(/Revoked 'tty-key' \(key_\w+\)\./);
    await t.waitFor(MENU);

    await t.send('Up', 'Enter');
    expect(await t.exitCode()).toBe(0);
    const listed = await svc(['keys', 'list', '--json'], env());
    expect(listed.stderr).toBe('');
    const keys = JSON.parse(listed.stdout).keys;
    expect(keys.map((k: { name: string }) => k.name)).toEqual(['bootstrap']);
  });

  it('keeps a new secret on screen until Enter, even above a long list', async () => {
    const crowded = await startLocalServer(['--plan', 'pro']);
    try {
      for (let i = 1; i <= 30; i++) await call(crowded.url, 'POST', '/api/service/user/api-keys', crowded.apiKey!, { name: `bulk-${i}` });
      term = await Terminal.start(['node', SVC_BIN], { ...env(crowded.apiKey!), SVC_BASE_URL: crowded.url }, { columns: 100, rows: 35 });
      const t = term;
      await t.waitFor(MENU);
      const screen = await createUntilPause(t, 'kept');
      const secret = SECRET.exec(screen)![0];
      // Nothing is redrawn while the session waits: the secret stays, whatever time passes.
      await new Promise((r) => setTimeout(r, 1500));
      expect(await t.screen()).toContain(secret);
      await t.send('Enter');
      const after = await t.waitFor(MENU);
      expect(after).not.toContain(PAUSE);
    } finally {
      await crowded.stop();
    }
  });

  it('after several actions, the terminal and its scrollback hold one screen, each message once, and no secret', async () => {
    const t = await startSession();
    const secret = SECRET.exec(await createUntilPause(t, 'once-key'))![0];
    await t.send('Enter');
    await t.waitFor(/once-key[\s\S]*\? What next\? \(Esc to quit\)\n❯ Create a key/);

    await t.send('Down', 'Enter');
    await t.waitFor('Key to switch on or off:');
    await t.send('once-key');
    await t.waitFor(/❯ once-key/);
    await t.send('Enter');
    await t.waitFor(/Disable 'once-key'/);
    await t.send('y', 'Enter');
    await t.waitFor(/once-key\s+sk_\S+\s+disabled[\s\S]*\? What next\? \(Esc to quit\)\n❯ Create a key/);

    await t.send('Down', 'Down', 'Down', 'Down', 'Enter');
    await t.waitFor(/works: 200[\s\S]*\? What next\? \(Esc to quit\)\n❯ Create a key/);
    await t.send('Down', 'Down', 'Down', 'Down', 'Down', 'Enter');
    await t.waitFor(MENU);

    await t.send('Down', 'Down', 'Enter');
    await t.waitFor('Keys to revoke:');
    await t.send('once-key');
    await t.waitFor(/❯◯ once-key/);
    await t.send('Enter');
    await t.waitFor("Revoke 'once-key'");
    await t.send('y', 'Enter');
    await t.waitFor(/Revoked 'once-key'[\s\S]*\? What next\? \(Esc to quit\)\n❯ Create a key/);

    const history = await t.history();
    expect(count(history, 'What next?')).toBe(1);
    expect(count(history, 'svc  profile default')).toBe(1);
    expect(history.match(/^ID /gm)).toHaveLength(1);
    expect(history.match(/^\* key_\w+ +bootstrap/gm)).toHaveLength(1);
    for (const said of ["Created key 'once-key'", 'only time this secret is shown', 'Disabled key_', 'works: 200', "Revoked 'once-key'"]) {
      expect(count(history.replace(/\s+/g, ' '), said), said).toBe(1);
    }
    // What was said comes in the order it was said, above the one screen.
    expect(history.indexOf('Created key')).toBeLessThan(history.indexOf('Disabled key_'));
    expect(history.indexOf("Revoked 'once-key'")).toBeLessThan(history.indexOf('svc  profile default'));
    expect(history).not.toContain(secret);
    expect(history).not.toContain('Name for the new key');
    await t.send('Up', 'Enter');
    expect(await t.exitCode()).toBe(0);
  });

  it('on a short terminal the screen fits, the menu scrolls, and the scrollback still holds one screen', async () => {
    const crowded = await startLocalServer(['--plan', 'pro']);
    try {
      for (let i = 1; i <= 30; i++) await call(crowded.url, 'POST', '/api/service/user/api-keys', crowded.apiKey!, { name: `bulk-${i}` });
      term = await Terminal.start(['node', SVC_BIN], { ...env(crowded.apiKey!), SVC_BASE_URL: crowded.url }, { columns: 80, rows: 20 });
      const t = term;
      const first = await t.waitFor(MENU);
      expect(first.trimEnd().split('\n').length).toBeLessThanOrEqual(20);
      expect(first).toMatch(/… and \d+ more/);
      // The key in use, older than every key that fits, is shown in place of the last of them.
      expect(first).toMatch(/^\* key_\w+ +bootstrap/m);
      for (let round = 0; round < 3; round++) {
        await t.send('Down', 'Down', 'Down', 'Enter');
        await t.waitFor('Key to rotate:');
        await t.send(`bulk-${30 - round}`);
        await t.waitFor(new RegExp(`❯ bulk-${30 - round} `));
        await t.send('Enter');
        await t.waitFor('this cannot be undone');
        await t.send('y', 'Enter');
        await t.waitFor(PAUSE);
        await t.send('Enter');
        await t.waitFor(MENU);
      }
      const history = await t.history();
      expect(count(history, 'What next?')).toBe(1);
      expect(count(history, 'svc  profile default')).toBe(1);
      expect(history.match(/Revoked the old key/g)).toHaveLength(3);
      expect(history).not.toMatch(SECRET);
    } finally {
      await crowded.stop();
    }
  });

  it('"Stored it?" clears the secret from the screen and the scrollback at 60x15 where it wraps, at 80x24, and after a resize at the question', async () => {
    term = await Terminal.start(['node', SVC_BIN], env(), { columns: 60, rows: 15 });
    const t = term;
    await t.waitFor(MENU);
    /** Every run of 12 characters of the secret past its `sk_`: none may be left anywhere, joined across wrapped rows or not. */
    const pieces = (secret: string) => Array.from({ length: secret.length - 14 }, (_, i) => secret.slice(3 + i, 15 + i));
    // A resize at the question asks it again, saying the scrollback is cleared too: the test waits for that question,
    // so Enter never overtakes the resize.
    const rounds: { name: string; size?: [number, number]; resizeTo?: [number, number] }[] = [
      { name: 'wraps-at-60x15' },
      { name: 'at-80x24', size: [80, 24] },
      { name: 'resized-narrower', size: [80, 24], resizeTo: [60, 15] },
      { name: 'resized-wider', size: [60, 15], resizeTo: [100, 30] },
    ];
    for (const round of rounds) {
      if (round.size) {
        await t.resize(...round.size);
        await t.waitFor(MENU);
      }
      await createUntilPause(t, round.name);
      const secret = SECRET.exec(await t.historyShowing(SECRET))![0];
      if (round.resizeTo) {
        await t.resize(...round.resizeTo);
        await t.waitFor("Enter clears the secret from the screen and the terminal's scrollback.");
      }
      await t.send('Enter');
      await t.waitFor(MENU);
      const history = await t.history();
      const raw = history.replace(/\n/g, '');
      for (const piece of pieces(secret)) expect(raw, `${round.name}: ${piece} of the secret is left`).not.toContain(piece);
      // What was said about each key stays, once.
      for (const { name } of rounds.slice(0, rounds.indexOf(round) + 1)) expect(count(history, `'${name}'`), `${round.name}: ${history}`).toBe(1);
    }
    await t.send('Escape');
    expect(await t.exitCode()).toBe(0);
    // The file's other tests share the server; a taller table would change what their screens hold.
    for (const { name } of rounds) expect((await svc(['keys', 'revoke', '--name', name, '--all', '--yes'], env())).exitCode).toBe(0);
  });

  it('Ctrl-C at "Stored it?" leaves the secret on screen, says so, and the menu comes back below it', async () => {
    const t = await startSession();
    const secret = SECRET.exec(await createUntilPause(t, 'kept-on-screen'))![0];
    await t.send('C-c');
    const screen = await t.waitFor(new RegExp(`${secret}[\\s\\S]*\\? What next\\? \\(Esc to quit\\)\\n❯ Create a key`));
    expect(count(screen, secret)).toBe(1);
    expect(screen.replace(/\s+/g, ' ')).toContain("The secret stays on the screen and in the terminal's scrollback: clear them yourself once it is stored.");
    await t.send('Escape');
    expect(await t.exitCode()).toBe(0);
  });

  it('shows a long list newest first, as much as fits, and says how many more; pick-lists are aligned and search them all', async () => {
    const crowded = await startLocalServer(['--plan', 'pro']);
    try {
      for (let i = 1; i <= 40; i++) {
        const name = i === 7 ? 'a-much-longer-name-than-the-rest' : `bulk-${i}`;
        await call(crowded.url, 'POST', '/api/service/user/api-keys', crowded.apiKey!, { name });
      }
      term = await Terminal.start(['node', SVC_BIN], { ...env(crowded.apiKey!), SVC_BASE_URL: crowded.url }, { columns: 100, rows: 35 });
      const t = term;
      const screen = await t.waitFor(MENU);
      expect(screen.trimEnd().split('\n').length).toBeLessThanOrEqual(35);
      const rows = screen.split('\n').filter((line) => /^\*? *key_\w+/.test(line.trim()));
      expect(rows.length).toBeGreaterThan(3);
      expect(rows[0]).toContain('bulk-40');
      expect(rows[1]).toContain('bulk-39');
      const more = /… and (\d+) more/.exec(screen);
      expect(rows.at(-1)).toMatch(/^\* key_\w+ +bootstrap/);
      expect(more, screen).not.toBeNull();
      expect(rows.length + Number(more![1])).toBe(41);

      await t.send('Down', 'Down', 'Enter');
      await t.waitFor('Keys to revoke:');
      await t.send('bulk-1');
      // The key named exactly what was typed first, then the others that hold it, newest first.
      const picker = await t.waitFor(/❯◯ bulk-1 /);
      expect(picker.indexOf(' bulk-19 ')).toBeGreaterThan(picker.indexOf('❯◯ bulk-1 '));
      expect(picker.indexOf(' bulk-18 ')).toBeGreaterThan(picker.indexOf(' bulk-19 '));
      const choices = picker.split('\n').filter((line) => /^[❯ ]◯ (bulk|a-much)/.test(line));
      expect(choices.length).toBeGreaterThan(1);
      const hintColumn = new Set(choices.map((line) => line.indexOf(' sk_')));
      expect(hintColumn.size, choices.join('\n')).toBe(1);
      // The oldest key, well below what the table showed, is found.
      await t.send('BSpace', 'BSpace', 'BSpace', 'BSpace', 'BSpace', 'BSpace', 'a-much');
      const found = await t.waitFor(/❯◯ a-much-longer-name-than-the…? +sk_/);
      expect(found).toBeTruthy();
      await t.send('Escape');
      await t.waitFor(MENU);
    } finally {
      await crowded.stop();
    }
  });

  it('a filter pasted with Enter into a picker, after the cursor moved: the echo, the question and the key revoked are the one the filter leaves', async () => {
    const own = await startLocalServer(['--plan', 'pro']);
    try {
      for (const name of ['laptop', 'deliv3', 'spare']) await call(own.url, 'POST', '/api/service/user/api-keys', own.apiKey!, { name });
      const ownEnv = { ...env(own.apiKey!), SVC_BASE_URL: own.url };
      term = await Terminal.start(['node', SVC_BIN], ownEnv, { columns: 120, rows: 50 });
      const t = term;
      await t.waitFor(MENU);
      await t.send('Down', 'Down', 'Enter');
      await t.waitFor(/❯◯ spare /);
      await t.send('Down', 'Down');
      await t.waitFor(/❯◯ laptop /);
      await t.paste('deliv\r');
      const asked = await t.waitFor(/Revoke '\S+' \(key_\w+\)\? This cannot be undone/);
      expect(asked).toMatch(/✔ Keys to revoke: deliv3 /);
      expect(asked).toMatch(/Revoke 'deliv3' \(key_\w+\)\?/);
      await t.send('y', 'Enter');
      await t.waitFor(/Revoked 'deliv3' \(key_\w+\)\./);
      await t.waitFor(MENU);

      // The key in use, typed fast: its warning comes before the question.
      await t.send('Down', 'Down', 'Enter');
      await t.waitFor(/❯◯ spare /);
      await t.paste('bootstrap\r');
      const warned = await t.waitFor(/Revoke 'bootstrap' \(key_\w+\)\?/);
      expect(warned.replace(/\s+/g, ' ')).toContain('This is the key svc is using');
      await t.send('Enter');
      await t.waitFor(MENU);
      await t.send('Up', 'Enter');
      expect(await t.exitCode()).toBe(0);
      const listed = await svc(['keys', 'list', '--json'], ownEnv);
      expect((JSON.parse(listed.stdout).keys as { name: string }[]).map((k) => k.name).sort()).toEqual(['bootstrap', 'laptop', 'spare']);
    } finally {
      await own.stop();
    }
  });

  it('warns that disabling the key in use locks the session out before asking, then offers to log in after the 401', async () => {
    const own = JSON.parse((await svc(['keys', 'create', 'session-key', '--json'], env())).stdout).key;
    const config = tempConfigDir();
    const profileEnv = { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: local.server.url, NO_COLOR: '1' };
    expect((await svc(['login', '--with-key'], profileEnv, { input: own.secret })).exitCode).toBe(0);
    term = await Terminal.start(['node', SVC_BIN], profileEnv, { columns: 80, rows: 50 });
    const t = term;
    await t.waitFor(MENU);
    await t.send('Down', 'Enter');
    await t.waitFor('Key to switch on or off:');
    await t.send('session-key');
    await t.waitFor(/❯ session-key .*← in use/);
    await t.send('Enter');
    const asked = (await t.waitFor(`Disable 'session-key' (${own.id})?`)).replace(/\s+/g, ' ');
    expect(asked.indexOf('locks the session out')).toBeGreaterThan(-1);
    expect(asked.indexOf('locks the session out')).toBeLessThan(asked.indexOf(`Disable 'session-key' (${own.id})?`));
    await t.send('y', 'Enter');
    const screen = await t.waitFor(MENDING_MENU);
    expect(screen).toContain('unknown, disabled, expired or revoked');
    expect(screen).toContain(`key:    sk_${own.secret.slice(3, 7)}…${own.secret.slice(-4)} from profile 'default' in the config store`);
    expect(screen).not.toContain('(none)');
    expect(screen).toContain('Choose "Log in with another key" or "Switch profile"');
    expect(screen).toContain('Switch profile');
    expect(screen).not.toMatch(/^ {2}Create a key/m);
    await t.send('Escape');
    expect(await t.exitCode()).toBe(0);
    config.remove();
  });

  it('a rejected key from SVC_API_KEY: says that it overrides every profile, and offers to quit', async () => {
    term = await Terminal.start(['node', SVC_BIN], env(`sk_${'c'.repeat(64)}`), { columns: 80, rows: 50 });
    const screen = await term.waitFor(/\? What next\? \(Esc to quit\)\n(.*\n)*?❯ Quit/);
    expect(screen).toContain('from the SVC_API_KEY environment variable');
    expect(screen.replace(/\s+/g, ' ')).toContain('SVC_API_KEY overrides every profile: quit, then put a working key in it or unset it.');
    await term.send('Enter');
    expect(await term.exitCode()).toBe(0);
  });

  it('starts with --profile whose key is disabled: the 401 is shown, and switching profile mends it', async () => {
    const config = tempConfigDir();
    try {
      const base = { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: local.server.url, SVC_API_KEY: undefined };
      const second = JSON.parse((await svc(['keys', 'create', 'second-key', '--json'], env())).stdout).key;
      expect((await svc(['login', '--with-key'], base, { input: local.server.apiKey! })).exitCode).toBe(0);
      expect((await svc(['login', '--with-key', '--profile', 'second'], base, { input: second.secret })).exitCode).toBe(0);
      expect((await svc(['keys', 'disable', second.id], env())).exitCode).toBe(0);

      term = await Terminal.start(['node', SVC_BIN, '--profile', 'second'], { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: local.server.url, NO_COLOR: '1' }, { columns: 80, rows: 50 });
      const t = term;
      const screen = await t.waitFor(MENDING_MENU);
      expect(screen).toContain('profile second');
      expect(screen).toContain('Authentication failed (401)');
      expect(screen).toContain(`sk_${second.secret.slice(3, 7)}…${second.secret.slice(-4)}`);
      // Refresh, Switch profile, Log in with another key, Quit: Up from the default reaches Switch profile.
      await t.send('Up', 'Enter');
      await t.waitFor('Profile:');
      await t.send('Enter');
      await t.waitFor(/profile default[\s\S]*\? What next\? \(Esc to quit\)\n❯ Create a key/);
      await t.send('Escape');
      expect(await t.exitCode()).toBe(0);
    } finally {
      config.remove();
    }
  });

  it('logging in with an unknown key inside the session fails there, and the session goes on', async () => {
    const t = await startSession();
    await t.send('Up', 'Up', 'Enter');
    await t.waitFor('API key:');
    await t.send(`sk_${'b'.repeat(64)}`, 'Enter');
    const screen = await t.waitFor(/Authentication failed \(401\)[\s\S]*\? What next\? \(Esc to quit\)\n❯ Create a key/);
    expect(screen).toContain('nothing was saved');
    await t.send('Up', 'Enter');
    expect(await t.exitCode()).toBe(0);
  });

  it('a failed action (the key revoked meanwhile: 404) is shown, and the menu comes back', async () => {
    const doomed = JSON.parse((await svc(['keys', 'create', 'gone-meanwhile', '--json'], env())).stdout).key;
    const t = await startSession();
    await t.send('Down', 'Down', 'Enter');
    await t.waitFor('Keys to revoke:');
    await t.send('gone-meanwhile');
    await t.waitFor(/❯◯ gone-meanwhile/);
    await t.send('Enter');
    await t.waitFor("Revoke 'gone-meanwhile'");
    expect((await svc(['keys', 'revoke', doomed.id, '--yes'], env())).exitCode).toBe(0);
    await t.send('y', 'Enter');
    const screen = await t.waitFor(/No key with id or name key_\w+[\s\S]*\? What next\? \(Esc to quit\)\n❯ Create a key/);
    expect(screen).toContain(doomed.id);
    await t.send('Up', 'Enter');
    expect(await t.exitCode()).toBe(0);
  });

  it('Esc in a name, a picker or a confirmation goes back to the menu, with nothing done', async () => {
    const t = await startSession();
    await t.send('Enter');
    await t.waitFor('Name for the new key:');
    await t.send('half-typed', 'Escape');
    // The question is cleared with the rest of the action; what it came to stays above the screen drawn again.
    await t.waitFor(cancelledTimes(1));

    await t.send('Down', 'Down', 'Enter');
    await t.waitFor('Keys to revoke:');
    await t.send('Escape');
    await t.waitFor(cancelledTimes(2));

    await t.send('Down', 'Down', 'Enter');
    await t.waitFor('Keys to revoke:');
    await t.send('bootstrap');
    await t.waitFor(/❯◯ bootstrap/);
    await t.send('Enter');
    await t.waitFor("Revoke 'bootstrap'");
    await t.send('Escape');
    await t.waitFor(cancelledTimes(3));
    expect(count(await t.history(), 'What next?')).toBe(1);
    await t.send('Up', 'Enter');
    expect(await t.exitCode()).toBe(0);
    const names = JSON.parse((await svc(['keys', 'list', '--json'], env())).stdout).keys.map((k: { name: string }) => k.name);
    expect(names).toContain('bootstrap');
    expect(names).not.toContain('half-typed');
  });

  it('Esc at the menu clears it and leaves with exit 0', async () => {
    const t = await startSession();
    await t.send('Escape');
    expect(await t.exitCode()).toBe(0);
    const screen = await t.screen();
    expect(screen).not.toContain('What next?');
    expect(screen).not.toContain('Create a key');
    expect(screen).toMatch(/\* key_\w+\s+bootstrap/);
  });

  it('Ctrl-C at the menu leaves with exit 0; inside an action\'s question it goes back to the menu', async () => {
    let t = await startSession();
    await t.send('C-c');
    expect(await t.exitCode()).toBe(0);
    await t.close();

    t = await startSession();
    await t.send('Enter');
    await t.waitFor('Name for the new key:');
    await t.send('C-c');
    await t.waitFor(cancelledTimes(1));
    await t.send('C-c');
    expect(await t.exitCode()).toBe(0);
  });

  it('svc keys with no subcommand opens the same session', async () => {
    term = await Terminal.start(['node', SVC_BIN, 'keys'], env(), { columns: 80, rows: 50 });
    await term.waitFor(MENU);
    await term.send('Up', 'Enter');
    expect(await term.exitCode()).toBe(0);
  });

  it('without a key, says so naming the menu item, which is the one chosen', async () => {
    const config = tempConfigDir();
    try {
      term = await Terminal.start(['node', SVC_BIN], { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: local.server.url, NO_COLOR: '1' }, { columns: 80, rows: 50 });
      const screen = await term.waitFor(MENDING_MENU);
      expect(screen).toContain(`Not logged in: no API key for profile 'default': choose "Log in" to save one.`);
      expect(screen).toMatch(/^❯ Log in$/m);
      await term.send('Enter');
      await term.waitFor('API key:');
      await term.send(local.server.apiKey!, 'Enter');
      await term.waitFor(/Logged in[\s\S]*\? What next\? \(Esc to quit\)\n❯ Create a key/);
      await term.send('Escape');
      expect(await term.exitCode()).toBe(0);
    } finally {
      config.remove();
    }
  });
});

describe('the session under pressure', () => {
  let free: LocalServer;
  beforeAll(async () => {
    free = await startLocalServer();
  });
  afterAll(() => free?.stop());

  /** A session at its menu, with the window's requests spent and the window ending in `seconds`, however long starting took. */
  async function spentSession(seconds: number): Promise<Terminal> {
    await windowEndsIn(free, 59);
    const t = await Terminal.start(['node', SVC_BIN], { ...env(free.apiKey!), SVC_BASE_URL: free.url }, { columns: 80, rows: 50 });
    term = t;
    await t.waitFor(MENU);
    while ((await call(free.url, 'GET', '/api/service/workspace', free.apiKey!)).status !== 429);
    await windowEndsIn(free, seconds);
    return t;
  }

  it('shows the rate-limit countdown and carries on', async () => {
    const t = await spentSession(4);
    await t.send('Down', 'Down', 'Down', 'Down', 'Down', 'Enter');
    await t.waitFor(/Rate limited: retrying in \d s/);
    await t.waitFor(MENU, 15_000);
    await t.send('Up', 'Enter');
    expect(await t.exitCode()).toBe(0);
  });

  it('Ctrl-C during the countdown ends the session with 130 and leaves no countdown behind', async () => {
    const t = await spentSession(30);
    await t.send('Down', 'Down', 'Down', 'Down', 'Down', 'Enter');
    await t.waitFor(/Rate limited: retrying in \d+ s \(Ctrl-C to stop\)/);
    await t.send('C-c');
    expect(await t.exitCode()).toBe(130);
    const screen = await t.screen();
    expect(screen).not.toContain('Ctrl-C to stop');
    expect(screen).not.toContain('^C');
  });

  it('with the server down: one message naming the address, no retries, and the session goes on', async () => {
    term = await Terminal.start(['node', SVC_BIN], { ...env(), SVC_BASE_URL: DOWN }, { columns: 80, rows: 50 });
    const t = term;
    const screen = await t.waitFor(/\? What next\? \(Esc to quit\)\n(.*\n)*?❯ Try again/);
    expect(count(screen, `Could not get an answer from ${DOWN}: connection refused.`)).toBe(1);
    // Every retry says so first ("Request failed …; retrying in …").
    expect(screen).not.toContain('retrying');
    expect(screen).toContain('Choose "Try again" once the server answers');
    await t.send('Enter');
    await t.waitFor(/\? What next\? \(Esc to quit\)\n(.*\n)*?❯ Try again/);
    await t.send('Escape');
    expect(await t.exitCode()).toBe(0);
    // Tried twice, said once: the second screen took the first one's place.
    expect(count(await t.history(), 'Could not get an answer')).toBe(1);
  });

  it('breaks long messages between words at 60 columns', async () => {
    term = await Terminal.start(['node', SVC_BIN], { ...env(), SVC_BASE_URL: DOWN }, { columns: 60, rows: 40 });
    const screen = await term.waitFor(/❯ Try again/);
    const lines = screen.split('\n');
    // capture-pane joins what the terminal itself wrapped: every line within 60 means svc broke them.
    for (const line of lines) expect([...line].length, line).toBeLessThanOrEqual(60);
    expect(screen).toContain('`svc serve --local --port 9`');
    expect(screen).toContain('SVC_BASE_URL');
  });

  it('redraws the screen to fit when the terminal shrinks or grows, in place of the old one, its cursor where it was', async () => {
    const t = await startSession();
    const keyRows = (screen: string) => screen.split('\n').filter((line) => /^(ID|\*? *key_)/.test(line.trim()));
    const onRevoke = /\? What next\? \(Esc to quit\)\n(.*\n)*?❯ Revoke a key/;
    await t.send('Down', 'Down');
    await t.waitFor(onRevoke);

    // No key is pressed: the size change alone draws the screen again. capture-pane joins what the terminal
    // itself rewrapped, so a row wider than 60 columns is one of the old screen's.
    await t.resize(60, 50);
    await t.waitFor((screen) => keyRows(screen).length > 1 && keyRows(screen).every((row) => [...row].length <= 60) && onRevoke.test(screen));
    let history = await t.historyShowing(onRevoke);
    expect(count(history, 'What next?')).toBe(1);
    expect(history.match(/^ID /gm)).toHaveLength(1);

    await t.resize(120, 50);
    await t.waitFor((screen) => /^ID .*WORKSPACE/m.test(screen) && onRevoke.test(screen));
    history = await t.historyShowing(onRevoke);
    expect(count(history, 'What next?')).toBe(1);
    expect(history.match(/^ID /gm)).toHaveLength(1);

    // The cursor went on from where it was: three more rows down is Refresh, which draws one screen again.
    await t.send('Down', 'Down', 'Down');
    await t.waitFor(/❯ Refresh/);
    await t.send('Enter');
    await t.waitFor(MENU);
    expect(count(await t.historyShowing(MENU), 'What next?')).toBe(1);
    await t.send('Escape');
    expect(await t.exitCode()).toBe(0);
  });
});

describe('svc with no command and nobody to ask', () => {
  it('prints help on stderr and exits 2 at once without a TTY', async () => {
    // Asking or starting the manager instead would end otherwise, or not at all (the test's timeout).
    const result = await svc([], env());
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('Usage: svc');
    const keys = await svc(['keys'], env());
    expect(keys.exitCode).toBe(2);
    expect(keys.stderr).toContain('Usage: svc keys');
  });

  it('does the same on a terminal with CI set or --no-input', async () => {
    // Rows enough for the whole help, its first line included.
    const size = { columns: 100, rows: 60 };
    term = await Terminal.start(['node', SVC_BIN], { ...env(), CI: 'true' }, size);
    await term.waitFor('Usage: svc');
    expect(await term.exitCode()).toBe(2);
    await term.close();
    term = await Terminal.start(['node', SVC_BIN, '--no-input'], env(), size);
    await term.waitFor('Usage: svc');
    expect(await term.exitCode()).toBe(2);
  });
});

describe('the screen laid out for the terminal, at any size and across resizes', () => {
  /** The table's header at each width: which columns fit. */
  const SIZES = [
    { columns: 40, rows: 10, header: /^ID +NAME$/m },
    { columns: 60, rows: 15, header: /^ID +NAME +KEY +STATUS$/m },
    { columns: 70, rows: 15, header: /^ID +NAME +KEY +STATUS +LAST USED$/m },
    { columns: 100, rows: 30, header: /^ID +NAME +KEY +STATUS +EXPIRES +LAST USED$/m },
  ];
  const TITLE = 'svc  profile default';

  /** The screen once drawn for `size`: its table's header fits the width, and it fits the rows. */
  async function drawnFor(t: Terminal, size: (typeof SIZES)[number]): Promise<string> {
    const deadline = Date.now() + SCREEN_WAIT_MS;
    let screen = '';
    while (Date.now() < deadline) {
      screen = await t.screen();
      if (MENU.test(screen) && size.header.test(screen) && count(screen, TITLE) === 1) return screen;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`the screen was never drawn for ${size.columns}x${size.rows}:\n${screen}`);
  }

  it.each([3, 300])('with %i keys: fits each size, keeps the key in use, and the scrollback holds one screen after actions and growing', async (keys) => {
    const dir = tempConfigDir();
    const { writeManyKeys } = await import('../helpers/many-keys.mjs');
    const file = `${dir.dir}/state.json`;
    const { secret } = writeManyKeys(file, { keys });
    const server = await startLocalServer(['--data', file]);
    try {
      term = await Terminal.start(['node', SVC_BIN], { ...env(secret), SVC_BASE_URL: server.url }, SIZES[0]);
      const t = term;
      for (const [i, size] of SIZES.entries()) {
        if (i > 0) await t.resize(size.columns, size.rows);
        const screen = await drawnFor(t, size);
        expect(screen.trimEnd().split('\n').length, screen).toBeLessThanOrEqual(size.rows);
        // The key in use (the newest) is the marked row; never every key when they do not fit.
        expect(screen).toMatch(/^\* key_\w+ +key \d+/m);
        if (keys === 300) expect(screen).toMatch(/… and \d+ more/);
        // An action (Ping) and back: what it said is kept once, above the screen drawn again.
        // On a short terminal the screen drawn again pushes what the action said into the scrollback.
        await t.send('Down', 'Down', 'Down', 'Down', 'Enter');
        let history = '';
        const deadline = Date.now() + SCREEN_WAIT_MS;
        // The history is read once the menu is back, so that it holds the screen drawn before the menu, not one half
        // drawn; screen and history are two captures, and a redraw (a SIGWINCH a loaded machine delivers late) may
        // come between them, so the history itself must show the menu too.
        const back = (h: string) => count(h, 'works: 200') === i + 1 && MENU.test(h) && count(h, TITLE) > 0;
        while (!(MENU.test(await t.screen()) && back((history = await t.history()))) && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 50));
        }
        expect(count(history, TITLE), history).toBe(1);
        expect(count(history, 'What next?'), history).toBe(1);
        expect(history.match(/works: 200/g), history).toHaveLength(i + 1);
      }
      // Made shorter: what the terminal itself moved into its scrollback stays there, and the screen is drawn again to fit.
      await t.resize(60, 15);
      const screen = await drawnFor(t, SIZES[1]!);
      expect(screen.trimEnd().split('\n').length, screen).toBeLessThanOrEqual(15);
      expect(count(await t.historyShowing(MENU), 'What next?')).toBe(1);
      await t.send('Escape');
      expect(await t.exitCode()).toBe(0);
    } finally {
      await server.stop();
      dir.remove();
    }
  });
});
