// tier: in-process
/**
 * A config file svc cannot open (broken, a directory where the file goes)
 * does not stop a command whose key and server both come from the
 * environment or the flags: a CI job with SVC_API_KEY and SVC_BASE_URL
 * needs nothing from it. It is said once, left as it is, and never read
 * for anything; without a server from outside it, the profile may hold the
 * server, and the command stops as before.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { svc, tempConfigDir, useLocalServer } from '../helpers/in-process.js';

const local = useLocalServer({ plan: 'pro' });
let config: ReturnType<typeof tempConfigDir>;
const file = () => join(config.dir, 'config.json');
const BROKEN = '{"profiles": {"default": {"apiKey": "sk_';

beforeEach(() => (config = tempConfigDir()));
afterEach(() => config.remove());

describe.each([
  ['not valid JSON', () => writeFileSync(file(), BROKEN, { mode: 0o600 }), 'could not be read: it is not valid JSON'],
  ['a directory', () => mkdirSync(file()), 'is a directory, not a regular file'],
])('a config file that is %s', (_, make, problem) => {
  beforeEach(make);

  it('SVC_API_KEY with SVC_BASE_URL or --base-url: the command runs, saying once that the file was left unread', async () => {
    const env = { SVC_CONFIG_DIR: config.dir, SVC_API_KEY: local.server.apiKey! };
    for (const [args, extra, source] of [
      [['keys', 'list', '--json'], { SVC_BASE_URL: local.server.url }, 'SVC_BASE_URL'],
      [['keys', 'list', '--json', '--base-url', local.server.url], {}, '--base-url'],
    ] as const) {
      const result = await svc([...args], { ...env, ...extra });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout).keys.length).toBeGreaterThan(0);
      const lines = result.stderr.split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`The config file ${file()} ${problem}`);
      expect(lines[0]).toContain(`SVC_API_KEY and ${source} need nothing from it, so svc went on without it.`);
      // Nothing of the file is echoed.
      expect(result.stderr).not.toContain('sk_');
    }
    if (problem.includes('JSON')) expect(readFileSync(file(), 'utf8')).toBe(BROKEN);
  });

  it('status shows its block, the key checked, after the one line about the file', async () => {
    const result = await svc(['status'], { SVC_CONFIG_DIR: config.dir, SVC_API_KEY: local.server.apiKey!, SVC_BASE_URL: local.server.url });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Key: +sk_\S+ \(from SVC_API_KEY\) +✓ valid$/m);
    expect(result.stderr.split('\n')).toHaveLength(1);
  });

  it('without a server from outside the file, or without SVC_API_KEY, the command stops on the file as before', async () => {
    const noServer = await svc(['keys', 'list'], { SVC_CONFIG_DIR: config.dir, SVC_API_KEY: local.server.apiKey! });
    expect(noServer.exitCode).toBe(1);
    expect(noServer.stderr).toContain(`The config file ${file()} ${problem}`);
    expect(noServer.stderr).not.toContain('went on without it');
    const noKey = await svc(['keys', 'list'], { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: local.server.url });
    expect(noKey.exitCode).toBe(1);
    expect(noKey.stderr).not.toContain('went on without it');
  });

  it('a change the command would save to the file is refused with the reason, after what was done is said', async () => {
    const env = { SVC_CONFIG_DIR: config.dir, SVC_API_KEY: local.server.apiKey!, SVC_BASE_URL: local.server.url };
    const made = JSON.parse((await svc(['keys', 'create', 'overlapping', '--json'], env)).stdout).key as { id: string };
    const result = await svc(['keys', 'rotate', made.id, '--overlap'], env);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`The config file ${file()} ${problem}`);
  });
});
