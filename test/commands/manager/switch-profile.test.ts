// tier: in-process
/**
 * Profiles you can manage (issue 25, 4): `svc profile list|use|remove`, the
 * default profile kept in the config file, a profile that does not exist
 * named as such with those that do, and the manager's "Switch profile"
 * offering to make its choice the default.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { svc, tempConfigDir, useLocalServer } from '../../helpers/in-process.js';
import { scriptedPrompter, type Step } from '../../helpers/prompter.js';

const local = useLocalServer({ plan: 'pro' });
let config: ReturnType<typeof tempConfigDir>;
/** svc against the local server with this test's own config, and no key in the environment. */
const env = (extra: Record<string, string | undefined> = {}) => ({ SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: local.server.url, ...extra });
const file = () => join(config.dir, 'config.json');
const saved = () => JSON.parse(readFileSync(file(), 'utf8'));

async function login(profile: string) {
  const result = await svc(['login', '--with-key', '--profile', profile], env(), { input: local.server.apiKey! });
  expect(result.exitCode, result.stderr).toBe(0);
}

beforeEach(async () => {
  config = tempConfigDir();
  await login('work');
});
afterEach(() => config.remove());

describe("the manager's Switch profile", () => {
  async function session(script: Step[]) {
    const prompter = scriptedPrompter(script);
    const result = await svc([], env(), { tty: true, columns: 120, rows: 60, deps: { prompter } });
    return { ...result, asked: prompter.asked };
  }

  it('offers to make the profile chosen the default, and saves it on yes', async () => {
    const result = await session([{ menu: 'Switch profile' }, { select: 'work' }, { confirm: true }]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.asked[2]).toBe("Make 'work' the default profile, for every svc command from now on?");
    expect(result.stderr).toContain(`Profile 'work' is now the default (saved in ${file()}).`);
    expect(saved().defaultProfile).toBe('work');
  });

  it('on no, switches for the session only', async () => {
    const result = await session([{ menu: 'Switch profile' }, { select: 'work' }, { confirm: false }]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain('svc  profile work');
    expect(saved().defaultProfile).toBeUndefined();
  });

  it("asks 'did you mean' for a name typed near a profile that exists, as --profile is told; yes switches to it, no keeps the new name", async () => {
    const meant = await session([{ menu: 'Switch profile' }, { select: 'Another profile' }, { text: 'wrok' }, { confirm: true }, { confirm: false }]);
    expect(meant.exitCode, meant.stderr).toBe(0);
    expect(meant.asked[3]).toBe("No profile 'wrok'; did you mean 'work'?");
    expect(meant.stderr).toContain('svc  profile work');
    const kept = await session([{ menu: 'Switch profile' }, { select: 'Another profile' }, { text: 'wrok' }, { confirm: false }]);
    expect(kept.stderr).toContain(`Profile 'wrok' does not exist yet`);
    // The command says the same nearest name, from the same place (domain/suggest.ts).
    const command = await svc(['keys', 'list', '--profile', 'wrok'], env());
    expect(command.exitCode).toBe(3);
    expect(command.stderr).toContain('Did you mean `--profile work`?');
  });

  it('does not ask for a new profile, which exists once logged in to; says it does not exist yet', async () => {
    const result = await session([{ menu: 'Switch profile' }, { select: 'Another profile' }, { text: 'fresh' }]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain(`Profile 'fresh' does not exist yet: choose "Log in" to create it with a key, or "Switch profile".`);
  });
});
