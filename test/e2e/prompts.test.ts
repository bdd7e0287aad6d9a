// tier: process
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SVC_BIN, startLocalServer, svc, useLocalServer } from '../helpers/cli.js';
import { Terminal } from '../helpers/terminal.js';

const local = useLocalServer();
let term: Terminal | undefined;
/** No SVC_API_KEY: login is about the profile. */
const baseEnv = () => ({ SVC_CONFIG_DIR: local.configDir, SVC_BASE_URL: local.server.url });
const keyEnv = () => local.env;

afterEach(async () => {
  await term?.close();
  term = undefined;
});

/**
 * A server of its own (a test here may revoke any of its keys) with
 * laptop, deliv3 and spare besides bootstrap, the key in use; pick-lists
 * show them newest first: spare, deliv3, laptop, bootstrap.
 */
async function serverWithKeys() {
  const server = await startLocalServer();
  const env = { ...baseEnv(), SVC_BASE_URL: server.url, SVC_API_KEY: server.apiKey!, NO_COLOR: '1' };
  const ids: Record<string, string> = {};
  for (const name of ['laptop', 'deliv3', 'spare']) ids[name] = JSON.parse((await svc(['keys', 'create', name, '--json'], env)).stdout).key.id;
  const names = async () => (JSON.parse((await svc(['keys', 'list', '--json'], env)).stdout).keys as { name: string }[]).map((k) => k.name).sort();
  return { server, env, ids, names };
}

describe('prompts on a real terminal', () => {
  it('login asks for the key with masked input and saves it', async () => {
    term = await Terminal.start(['node', SVC_BIN, 'login'], baseEnv());
    await term.waitFor('API key:');
    await term.send(local.server.apiKey!, 'Enter');
    const screen = await term.waitFor('Logged in');
    expect(await term.exitCode()).toBe(0);
    expect(screen).not.toContain(local.server.apiKey!);
    expect(screen).toContain('*'.repeat(20));
    const saved = JSON.parse(readFileSync(join(local.configDir, 'config.json'), 'utf8'));
    expect(saved.profiles.default.apiKey).toBe(local.server.apiKey);
  });

  it('keys create asks for a missing name, then shows the secret once with the warning', async () => {
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'create'], keyEnv());
    await term.waitFor('Name for the new key:');
    await term.send('from-a-terminal', 'Enter');
    const screen = await term.waitFor('only time this secret is shown');
    expect(await term.exitCode()).toBe(0);
    expect(screen).toMatch(/Created key 'from-a-terminal'/);
    expect(screen).toMatch(/sk_[A-Za-z0-9]{64}/);
  });

  it('keys revoke asks for confirmation; "n" keeps the key, "y" revokes it', async () => {
    const created = JSON.parse((await svc(['keys', 'create', 'doomed', '--json'], keyEnv())).stdout).key;
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'revoke', created.id], keyEnv());
    await term.waitFor(`Revoke '${created.name}' (${created.id})?`);
    await term.send('n', 'Enter');
    expect(await term.exitCode()).toBe(130);
    await term.close();

    term = await Terminal.start(['node', SVC_BIN, 'keys', 'revoke', created.id], keyEnv());
    await term.waitFor(`Revoke '${created.name}' (${created.id})?`);
    await term.send('y', 'Enter');
    await term.waitFor(`Revoked '${created.name}' (${created.id}).`);
    expect(await term.exitCode()).toBe(0);
  });

  it('keys revoke without an id offers a pick-list', async () => {
    const created = JSON.parse((await svc(['keys', 'create', 'pick-me', '--json'], keyEnv())).stdout).key;
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'revoke'], keyEnv());
    await term.waitFor('Keys to revoke');
    await term.send('Tab', 'Enter');
    await term.waitFor(`Revoke '${created.name}' (${created.id})?`);
    await term.send('y', 'Enter');
    await term.waitFor(`Revoked '${created.name}' (${created.id}).`);
    expect(await term.exitCode()).toBe(0);
  });

  it('letters and digits typed into the many-key list mark nothing (no "a" for all, no "1" for the first row)', async () => {
    for (const name of ['one', 'two']) expect((await svc(['keys', 'create', name], keyEnv())).exitCode).toBe(0);
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'revoke'], { ...keyEnv(), NO_COLOR: '1' });
    await term.waitFor('Keys to revoke');
    // With inquirer's checkbox, "a" marked all three keys, "1" toggled the first and Tab did nothing: two marks, not one.
    await term.send('a', '1', 'BSpace', 'BSpace', 'Tab');
    const screen = await term.waitFor('◉');
    expect(screen.match(/◉/g)).toHaveLength(1);
    await term.send('C-c');
    expect(await term.exitCode()).toBe(130);
  });

  it('keys list draws a table marking the key in use, with relative times', async () => {
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'list'], { ...keyEnv(), NO_COLOR: '1' });
    const screen = await term.waitFor('the key svc is using');
    expect(await term.exitCode()).toBe(0);
    expect(screen).toMatch(/^ID\s+NAME\s+KEY\s+STATUS\s+EXPIRES\s+LAST USED/m);
    expect(screen).toMatch(/\* key_\w+\s+bootstrap/);
    expect(screen).toMatch(/(just now|seconds? ago)/);
    expect(screen).not.toContain('\x1b[');
  });

  it('Ctrl-C at a prompt exits 130', async () => {
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'create'], keyEnv());
    await term.waitFor('Name for the new key:');
    await term.send('C-c');
    expect(await term.exitCode()).toBe(130);
  });

  it('Esc at a prompt withdraws it, as Ctrl-C does: exit 130, nothing made', async () => {
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'create'], keyEnv());
    await term.waitFor('Name for the new key:');
    await term.send('never-made', 'Escape');
    expect(await term.exitCode()).toBe(130);
    expect((await svc(['keys', 'list', '--name', 'never-made', '--json'], keyEnv())).stdout).toContain('"keys": []');
  });

  it('CI set: no prompt, a usage error instead', async () => {
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'create'], { ...keyEnv(), CI: 'true' });
    await term.waitFor('svc keys create <name>');
    expect(await term.exitCode()).toBe(2);
  });

  describe('pick-lists fed keys in one write (a paste, fast typing)', () => {
    it('a paste reaches the program in one read, keys and all', async () => {
      const firstRead = "process.stdin.setRawMode(true); console.log('ready'); process.stdin.once('data', (d) => { console.log('read', JSON.stringify(String(d))); process.exit(0); });";
      term = await Terminal.start(['node', '-e', firstRead], {});
      await term.waitFor('ready');
      await term.paste('\x1b[B deliv\r');
      await term.waitFor('read "\\u001b[B deliv\\r"');
    });

    it('keys view: with the cursor moved, a filter pasted with Enter views the key the filter leaves', async () => {
      const own = await serverWithKeys();
      try {
        term = await Terminal.start(['node', SVC_BIN, 'keys', 'view'], own.env, { columns: 140, rows: 40 });
        await term.waitFor(/❯ spare /);
        await term.send('Down', 'Down');
        await term.waitFor(/❯ laptop /);
        await term.paste('deliv\r');
        const screen = await term.waitFor(/✔ Key to view: deliv3 /);
        expect(await term.exitCode()).toBe(0);
        expect((await term.screen()).includes(own.ids.deliv3!), screen).toBe(true);
        expect(await term.screen()).not.toContain(own.ids.laptop!);
      } finally {
        await own.server.stop();
      }
    });

    it('keys revoke: a name with a digit pasted with Enter, after the cursor moved, asks about the key of that name alone', async () => {
      const own = await serverWithKeys();
      try {
        term = await Terminal.start(['node', SVC_BIN, 'keys', 'revoke'], own.env, { columns: 140, rows: 40 });
        await term.waitFor(/❯◯ spare /);
        await term.send('Down', 'Down');
        await term.waitFor(/❯◯ laptop /);
        await term.paste('deliv3\r');
        const asked = await term.waitFor(`Revoke 'deliv3' (${own.ids.deliv3})? This cannot be undone.`);
        expect(asked).toMatch(/✔ Keys to revoke: deliv3 /);
        await term.send('n', 'Enter');
        expect(await term.exitCode()).toBe(130);
        expect(await own.names()).toEqual(['bootstrap', 'deliv3', 'laptop', 'spare']);
      } finally {
        await own.server.stop();
      }
    });

    it('keys revoke: Down, Tab and Enter in one write revoke the key marked, which the echo and the question name', async () => {
      const own = await serverWithKeys();
      try {
        term = await Terminal.start(['node', SVC_BIN, 'keys', 'revoke'], own.env, { columns: 140, rows: 40 });
        await term.waitFor(/❯◯ spare /);
        await term.paste('\x1b[B\t\r');
        const asked = await term.waitFor(`Revoke 'deliv3' (${own.ids.deliv3})? This cannot be undone.`);
        expect(asked).toMatch(/✔ Keys to revoke: deliv3 /);
        await term.send('y', 'Enter');
        await term.waitFor(`Revoked 'deliv3' (${own.ids.deliv3}).`);
        expect(await term.exitCode()).toBe(0);
        expect(await own.names()).toEqual(['bootstrap', 'laptop', 'spare']);
      } finally {
        await own.server.stop();
      }
    });
  });
});
