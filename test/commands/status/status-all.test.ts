// tier: in-process
/**
 * `svc status --all` checks every profile's own key against its own server,
 * as `gh auth status` checks every account: one row each, --json an entry
 * each (docs/status-all.schema.json), and an exit code that says whether any
 * saved key does not work.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keyHint } from '../../../src/contract/key-format.js';
import { svc, tempConfigDir, useLocalServer } from '../../helpers/in-process.js';

const schema = (name: string) => JSON.parse(readFileSync(resolve(import.meta.dirname, '../../../docs', name), 'utf8'));
const ajv = new Ajv2020({ strict: true });
ajv.addSchema(schema('cli-error.schema.json'));
const valid = ajv.compile(schema('status-all.schema.json'));

const local = useLocalServer();
/** Nothing listens on port 9 (discard) on a test machine: the connection is refused at once. */
const DOWN = 'http://127.0.0.1:9';
const UNKNOWN_KEY = `sk_${'u'.repeat(64)}`;

let config: ReturnType<typeof tempConfigDir>;
beforeEach(() => {
  config = tempConfigDir();
});
afterEach(() => config.remove());

const writeConfig = (file: object) => writeFileSync(join(config.dir, 'config.json'), JSON.stringify(file), { mode: 0o600 });
/** No SVC_API_KEY, no SVC_BASE_URL: the profiles' own. A bus that is not there makes the keyring fail at once. */
const env = (more: Record<string, string> = {}) => ({ SVC_CONFIG_DIR: config.dir, DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus', ...more });

describe('svc status --all', () => {
  it('one row per profile: live, rejected, unreachable, unreadable, no key; exit 3 when a key is rejected', async () => {
    const url = local.server.url;
    writeConfig({
      defaultProfile: 'live',
      profiles: {
        live: { apiKey: local.server.apiKey, baseUrl: url },
        gone: { apiKey: UNKNOWN_KEY, baseUrl: url },
        down: { apiKey: UNKNOWN_KEY, baseUrl: DOWN },
        vault: { keyring: { service: 'svc', account: 'vault@x', hint: 'sk_abcd…wxyz' }, baseUrl: url },
      },
    });
    const text = await svc(['status', '--all', '--profile', 'gone'], env());
    expect(text.exitCode, text.stderr).toBe(3);
    const rows = text.stdout.trimEnd().split('\n').map((line) => line.split('\t'));
    expect(rows[0]).toEqual(['PROFILE', 'SERVER', 'KEY', 'STATUS', 'DETAIL']);
    expect(rows.slice(1).map((row) => row.slice(0, 4))).toEqual([
      ['default', 'http://127.0.0.1:8787', '', 'none'],
      ['down', DOWN, keyHint(UNKNOWN_KEY), 'unreachable'],
      ['gone', url, keyHint(UNKNOWN_KEY), 'rejected'],
      ['live', url, keyHint(local.server.apiKey!), 'live'],
      ['vault', url, 'sk_abcd…wxyz', 'unreadable'],
    ]);
    expect(rows[2]![4]).not.toBe('');
    expect(text.stderr).toContain('3 of 5 profiles have a key that does not work: down (unreachable), gone (rejected), vault (unreadable).');

    const json = await svc(['status', '--all', '--json', '--profile', 'gone'], env());
    expect(json.exitCode).toBe(3);
    const doc = JSON.parse(json.stdout);
    expect(valid(doc), JSON.stringify(valid.errors)).toBe(true);
    expect(doc.ok).toBe(false);
    const byName = Object.fromEntries(doc.profiles.map((p: { profile: string }) => [p.profile, p]));
    expect(byName.live).toMatchObject({ state: 'live', default: true, active: false, key: { valid: true }, error: null });
    expect(byName.gone).toMatchObject({ state: 'rejected', active: true, key: { valid: false }, error: { exitCode: 3 } });
    expect(byName.down).toMatchObject({ state: 'unreachable', baseUrl: DOWN, error: { exitCode: 1 } });
    expect(byName.default).toMatchObject({ state: 'none', key: null, error: null });
  });

  it("never checks SVC_API_KEY or SVC_BASE_URL, only the profiles' own; exit 0 when every saved key works, 1 when a server is down", async () => {
    writeConfig({ profiles: { live: { apiKey: local.server.apiKey, baseUrl: local.server.url } } });
    const ok = await svc(['status', '--all'], env({ SVC_API_KEY: UNKNOWN_KEY, SVC_BASE_URL: DOWN }));
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.stderr).toContain("--all checked the profiles' own keys and servers");
    writeConfig({ profiles: { live: { apiKey: local.server.apiKey, baseUrl: local.server.url }, down: { apiKey: UNKNOWN_KEY, baseUrl: DOWN } } });
    const down = await svc(['status', '--all', '--json'], env());
    expect(down.exitCode).toBe(1);
    expect(JSON.parse(down.stdout).ok).toBe(false);
  });

  it('no profile with a key is exit 3; --base-url is a usage error', async () => {
    const none = await svc(['status', '--all'], env());
    expect(none.exitCode).toBe(3);
    expect(none.stderr).toContain('No profile holds a key');
    const flag = await svc(['status', '--all', '--base-url', local.server.url], env());
    expect(flag.exitCode).toBe(2);
  });

  it('on a terminal: a table with the active profile marked', async () => {
    writeConfig({ profiles: { live: { apiKey: local.server.apiKey, baseUrl: local.server.url } } });
    const result = await svc(['status', '--all', '--profile', 'live'], env(), { tty: true, columns: 120 });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/\* live .*✓ live/);
    expect(result.stderr).toContain('* the profile svc uses here (--profile)');
  });
});
