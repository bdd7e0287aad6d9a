// tier: process
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SVC_BIN, svc, useLocalServer } from '../helpers/cli.js';
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
    const created = JSON.parse((await svc(['keys', 'create', 'doomed', '--json'], keyEnv())).stdout);
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'revoke', created.id], keyEnv());
    await term.waitFor(`Revoke ${created.id}?`);
    await term.send('n', 'Enter');
    expect(await term.exitCode()).toBe(1);
    await term.close();

    term = await Terminal.start(['node', SVC_BIN, 'keys', 'revoke', created.id], keyEnv());
    await term.waitFor(`Revoke ${created.id}?`);
    await term.send('y', 'Enter');
    await term.waitFor(`Revoked '${created.name}' (${created.id}).`);
    expect(await term.exitCode()).toBe(0);
  });

  it('keys revoke without an id offers a pick-list', async () => {
    const created = JSON.parse((await svc(['keys', 'create', 'pick-me', '--json'], keyEnv())).stdout);
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'revoke'], keyEnv());
    await term.waitFor('Keys to revoke');
    await term.send('Space', 'Enter');
    await term.waitFor(`Revoke ${created.id}?`);
    await term.send('y', 'Enter');
    await term.waitFor(`Revoked '${created.name}' (${created.id}).`);
    expect(await term.exitCode()).toBe(0);
  });

  it('letters typed into the many-key list mark nothing (no "a" for all, the key in use included)', async () => {
    for (const name of ['one', 'two']) expect((await svc(['keys', 'create', name], keyEnv())).exitCode).toBe(0);
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'revoke'], { ...keyEnv(), NO_COLOR: '1' });
    await term.waitFor('Keys to revoke');
    // With inquirer's shortcuts, "a" marked all three keys and space then unmarked the first: two marks, not one.
    await term.send('a', 'Space');
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
});
