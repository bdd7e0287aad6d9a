// tier: in-process
/**
 * The key-health step remembers the profile key's expiry from a key list
 * (docs/contract.md §C8). That is a cache written after the command did its
 * work: it is written only when the expiry changed, and a failure to write
 * it is a warning on stderr, never a failed command.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { svc, tempConfigDir, useLocalServer } from '../helpers/in-process.js';

const local = useLocalServer({ plan: 'pro' });
let config: ReturnType<typeof tempConfigDir>;
const file = () => join(config.dir, 'config.json');
/** The key and the address from the profile alone, as after `svc login`. */
const env = () => ({ SVC_CONFIG_DIR: config.dir });
/** A directory where the config writer makes its lock file: every save fails at once, whoever runs the tests (root too). */
const blockSaves = () => mkdirSync(`${file()}.lock`);

beforeEach(() => {
  config = tempConfigDir();
  writeFileSync(file(), JSON.stringify({ profiles: { default: { apiKey: local.server.apiKey, baseUrl: local.server.url } } }), { mode: 0o600 });
});
afterEach(() => config.remove());

describe("remembering the key's expiry", () => {
  it('a save that fails is a warning: the command still succeeds, prints its output and exits 0', async () => {
    const before = readFileSync(file(), 'utf8');
    blockSaves();
    const result = await svc(['keys', 'list', '--json'], env());
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).keys.length).toBeGreaterThan(0);
    expect(result.stderr).toContain("The key's expiry was not remembered in profile 'default'.");
    expect(result.stderr).toContain(`Could not save profile 'default' to ${file()}`);
    expect(readFileSync(file(), 'utf8')).toBe(before);
  });

  it('is written once; a command that finds it unchanged writes nothing', async () => {
    const first = await svc(['keys', 'list', '--json'], env());
    expect(first.exitCode, first.stderr).toBe(0);
    const remembered = JSON.parse(readFileSync(file(), 'utf8')).profiles.default.keyExpiry;
    expect(remembered).toMatchObject({ id: expect.stringMatching(/^key_/), expiresAt: null });
    const written = statSync(file());
    blockSaves();
    const again = await svc(['keys', 'list', '--json'], env());
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).toBe('');
    expect(statSync(file()).mtimeMs).toBe(written.mtimeMs);
    expect(statSync(file()).ino).toBe(written.ino);
  });

  it('the same expiry with its fields in another order is no change', async () => {
    await svc(['keys', 'list', '--json'], env());
    const { hint, id, expiresAt } = JSON.parse(readFileSync(file(), 'utf8')).profiles.default.keyExpiry;
    writeFileSync(file(), JSON.stringify({ profiles: { default: { apiKey: local.server.apiKey, baseUrl: local.server.url, keyExpiry: { expiresAt, id, hint } } } }), { mode: 0o600 });
    blockSaves();
    const again = await svc(['keys', 'list', '--json'], env());
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).toBe('');
  });
});
