import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, afterEach, describe, expect, it } from 'vitest';
import { SVC_BIN, startLocalServer, svc, tempConfigDir, type LocalServer } from '../helpers/cli.js';
import { Terminal } from '../helpers/terminal.js';

let server: LocalServer;
const config = tempConfigDir();
let term: Terminal | undefined;
const baseEnv = () => ({ SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: server.url, PATH: process.env.PATH! });
const keyEnv = () => ({ ...baseEnv(), SVC_API_KEY: server.apiKey! });

beforeAll(async () => {
  server = await startLocalServer();
});
afterEach(async () => {
  await term?.close();
  term = undefined;
});
afterAll(async () => {
  await server?.stop();
  config.remove();
});

describe('prompts on a real terminal', () => {
  it('login asks for the key with masked input and saves it', async () => {
    term = await Terminal.start(['node', SVC_BIN, 'login'], baseEnv());
    await term.waitFor('API key:');
    await term.send(server.apiKey!, 'Enter');
    const screen = await term.waitFor('Logged in');
    expect(await term.exitCode()).toBe(0);
    expect(screen).not.toContain(server.apiKey!);
    expect(screen).toContain('*'.repeat(20));
    const saved = JSON.parse(readFileSync(join(config.dir, 'config.json'), 'utf8'));
    expect(saved.profiles.default.apiKey).toBe(server.apiKey);
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
    await term.waitFor(`Revoked ${created.id}`);
    expect(await term.exitCode()).toBe(0);
  });

  it('keys revoke without an id offers a pick-list', async () => {
    const created = JSON.parse((await svc(['keys', 'create', 'pick-me', '--json'], keyEnv())).stdout);
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'revoke'], keyEnv());
    await term.waitFor('Keys to revoke');
    await term.send('Space', 'Enter');
    await term.waitFor(`Revoke ${created.id}?`);
    await term.send('y', 'Enter');
    await term.waitFor(`Revoked ${created.id}`);
    expect(await term.exitCode()).toBe(0);
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

  it('CI set: no prompt, a usage error instead', async () => {
    term = await Terminal.start(['node', SVC_BIN, 'keys', 'create'], { ...keyEnv(), CI: 'true' });
    await term.waitFor('svc keys create <name>');
    expect(await term.exitCode()).toBe(2);
  });
});
