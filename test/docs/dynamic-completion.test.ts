// tier: process
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SVC_BIN, cleanEnv, svc, useLocalServer } from '../helpers/cli.js';
import { sendJson, startFaultServer } from '../helpers/fault-server.js';
import { svc as svcInProcess } from '../helpers/in-process.js';
import { Terminal } from '../helpers/terminal.js';
import { installed } from './helpers.js';

/**
 * The scripts ask `svc __complete` for key ids and profile names, so they
 * are driven here against a real server, with svc on PATH as users have it.
 */
const local = useLocalServer();
const dir = mkdtempSync(join(tmpdir(), 'svc-dynamic-completion-'));
const scripts: Record<string, string> = {};
let ids: string[] = [];
/** Nothing listens on port 9 (discard): the connection is refused at once. */
const DOWN = 'http://127.0.0.1:9';

beforeAll(async () => {
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'svc'), `#!/bin/sh\nexec node '${SVC_BIN}' "$@"\n`);
  chmodSync(join(bin, 'svc'), 0o755);
  for (const shell of ['bash', 'zsh', 'fish']) {
    scripts[shell] = join(dir, `svc.${shell}`);
    writeFileSync(scripts[shell], (await svc(['completion', shell], {})).stdout);
  }
  // Profile 'work' holds the server's key; 'default' holds none, so only a forwarded --profile work lists ids.
  const login = await svc(['login', '--with-key', '--profile', 'work'], { ...local.env, SVC_API_KEY: undefined }, { input: local.server.apiKey! });
  expect(login.exitCode, login.stderr).toBe(0);
  for (const name of ['alpha', 'beta']) expect((await svc(['keys', 'create', name], local.env)).exitCode).toBe(0);
  ids = JSON.parse((await svc(['keys', 'list', '--json'], local.env)).stdout).keys.map((k: { id: string }) => k.id);
  expect(ids).toHaveLength(3);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The environment of a shell whose user has svc on PATH and a config with two profiles. */
function shellEnv(extra: Record<string, string | undefined> = {}) {
  return cleanEnv({ ...local.env, PATH: `${join(dir, 'bin')}:${process.env.PATH}`, ...extra });
}

describe('svc __complete', () => {
  it('lists key ids with their names and states, and profile names with their keys', async () => {
    const keys = await svc(['__complete', 'key-ids'], local.env);
    expect(keys.exitCode).toBe(0);
    expect(keys.stderr).toBe('');
    const lines = keys.stdout.split('\n');
    expect(lines.map((line) => line.split('\t')[0])).toEqual(ids);
    expect(lines[0]).toMatch(/^key_\w+\tbeta, enabled$/);
    const profiles = await svc(['__complete', 'profiles'], local.env);
    expect(profiles.stdout).toBe(`default\tno key saved\nwork\t${`sk_${local.server.apiKey!.slice(3, 7)}…${local.server.apiKey!.slice(-4)}`}`);
  });

  it('is silent and never waits when the server is down, there is no key, or the kind is unknown', async () => {
    for (const [args, env] of [
      [['__complete', 'key-ids'], { ...local.env, SVC_BASE_URL: DOWN }],
      [['__complete', 'key-ids'], { ...local.env, SVC_API_KEY: undefined }],
      [['__complete', 'key-ids'], { ...local.env, SVC_API_KEY: 'not a key' }],
      [['__complete', 'colours'], local.env],
    ] as const) {
      // In-process, where every sleep, before a retry or in a rate-limit wait, is recorded.
      const result = await svcInProcess([...args], env);
      expect(result.slept, args.join(' ')).toEqual([]);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe('');
      expect(result.exitCode).toBe(0);
    }
  });

  it('is not offered anywhere: hidden from help and from the scripts\' command lists', async () => {
    expect((await svc(['--help'], {})).stdout).not.toContain('__complete');
    const bash = await execa('bash', ['-c', 'source "$0"; COMP_WORDS=(svc __); COMP_CWORD=1; _svc; printf "%s\\n" "${COMPREPLY[@]}"', scripts.bash!], { env: shellEnv(), extendEnv: false });
    expect(bash.stdout).toBe('');
  });
});

describe('bash completes key ids and profiles', () => {
  async function complete(env: Record<string, string | undefined>, ...words: string[]): Promise<string[]> {
    const { stdout } = await execa(
      'bash',
      ['-c', 'source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _svc; printf "%s\\n" "${COMPREPLY[@]}"', scripts.bash!, ...words],
      { env: shellEnv(env), extendEnv: false },
    );
    return stdout.split('\n').filter(Boolean);
  }
  /** The words of a listing, without the "  (description)" bash shows beside each. */
  const words = (offered: string[]) => offered.map((line) => line.replace(/ *  \(.*\)$/, ''));

  it('offers the ids where a command takes one, each listed with its name and state as cobra lists descriptions', async () => {
    for (const verb of ['revoke', 'rm', 'enable', 'disable', 'rotate', 'view']) {
      const offered = await complete({}, 'svc', 'keys', verb, '');
      expect(words(offered)).toEqual(ids);
      expect(offered[0]).toMatch(/^key_\w+ +\(beta, enabled\)$/);
      expect(offered[1]).toMatch(/^key_\w+ +\(alpha, enabled\)$/);
    }
    // One match is inserted alone: a description must never land on the command line.
    expect(await complete({}, 'svc', 'keys', 'view', ids[1]!.slice(0, -2))).toEqual([ids[1]]);
    expect(await complete({}, 'svc', 'keys', 'create', '')).toEqual([]);
  });

  it('completes a key name that one key alone has to its id, and lists words alone for menu-complete', async () => {
    expect(await complete({}, 'svc', 'keys', 'revoke', 'alp')).toEqual([ids[1]]);
    expect(await complete({}, 'svc', 'keys', 'revoke', 'nothing-so')).toEqual([]);
    const { stdout } = await execa(
      'bash',
      ['-c', 'source "$0"; COMP_WORDS=(svc keys revoke ""); COMP_CWORD=3; COMP_TYPE=37; _svc; printf "%s\\n" "${COMPREPLY[@]}"', scripts.bash!],
      { env: shellEnv(), extendEnv: false },
    );
    expect(stdout.split('\n')).toEqual(ids);
  });

  it('cuts descriptions to the terminal width', async () => {
    const offered = await complete({ COLUMNS: String(ids[0]!.length + 14) }, 'svc', 'keys', 'revoke', '');
    expect(words(offered)).toEqual(ids);
    for (const line of offered) expect([...line].length).toBeLessThanOrEqual(ids[0]!.length + 14);
    expect(offered[0]).toMatch(/…\)$/);
  });

  it('offers profile names for --profile, and asks for the ids of the profile typed', async () => {
    expect(await complete({}, 'svc', '--profile', '')).toEqual(['default  (no key saved)', `work     (sk_${local.server.apiKey!.slice(3, 7)}…${local.server.apiKey!.slice(-4)})`]);
    expect(await complete({}, 'svc', 'keys', 'list', '--profile', 'w')).toEqual(['work']);
    const noEnvKey = { SVC_API_KEY: undefined };
    expect(await complete(noEnvKey, 'svc', 'keys', 'revoke', '')).toEqual([]);
    expect(words(await complete(noEnvKey, 'svc', '--profile', 'work', 'keys', 'revoke', ''))).toEqual(ids);
  });

  it('offers nothing, without a word on the screen or a second try, when the server is down or failing', async () => {
    const failing = await startFaultServer((_req, res) => sendJson(res, 503, { error: 'Down for maintenance', code: 'UNAVAILABLE' }));
    try {
      for (const url of [DOWN, failing.url]) {
        const { stdout, stderr } = await execa(
          'bash',
          ['-c', 'source "$0"; COMP_WORDS=(svc keys revoke ""); COMP_CWORD=3; _svc; printf "%s\\n" "${COMPREPLY[@]}"', scripts.bash!],
          { env: shellEnv({ SVC_BASE_URL: url }), extendEnv: false },
        );
        expect(stdout, url).toBe('');
        expect(stderr, url).toBe('');
      }
      // Any other read is retried after a 503 (test/invariants/faults.test.ts): this one is asked once.
      expect(failing.seen).toHaveLength(1);
    } finally {
      await failing.close();
    }
  });
});

describe('fish completes key ids and profiles', () => {
  async function complete(line: string, env: Record<string, string | undefined> = {}): Promise<string[]> {
    const { stdout } = await execa('fish', ['-c', `source ${scripts.fish}; complete -C '${line}'`], { env: shellEnv(env), extendEnv: false });
    return stdout.split('\n').filter(Boolean);
  }

  it('offers ids with their names, profiles with their keys, and follows --profile', async ({ skip }) => {
    if (!(await installed('fish'))) skip('fish is not installed');
    const offered = await complete('svc keys revoke ');
    expect(offered.map((line) => line.split('\t')[0])).toEqual(ids);
    expect(offered[1]).toMatch(/\talpha, enabled$/);
    expect((await complete('svc --profile ')).map((line) => line.split('\t')[0])).toEqual(['default', 'work']);
    expect(await complete('svc keys revoke ', { SVC_API_KEY: undefined })).toEqual([]);
    expect((await complete('svc --profile work keys enable ', { SVC_API_KEY: undefined })).map((line) => line.split('\t')[0])).toEqual(ids);
    expect(await complete('svc keys revoke ', { SVC_BASE_URL: DOWN })).toEqual([]);
  });
});

describe('zsh completes key ids and profiles', () => {
  let term: Terminal | undefined;
  afterAll(() => term?.close());

  it('lists ids with their names on Tab, and profiles for --profile', async ({ skip }) => {
    if (!(await installed('zsh'))) skip('zsh is not installed');
    const env = Object.fromEntries(Object.entries(shellEnv({ PS1: 'zsh> ' })).filter((e): e is [string, string] => e[1] !== undefined));
    term = await Terminal.start(['zsh', '-f'], env, { columns: 120, rows: 30 });
    await term.send(`autoload -Uz compinit; compinit -u -D; source ${scripts.zsh}; clear`, 'Enter');
    await term.waitFor(/^zsh> $/m);
    // Three ids share 'key_': the first Tab inserts that, the second lists them.
    await term.send('svc keys revoke ', 'Tab', 'Tab');
    let screen = await term.waitFor(ids[2]!);
    for (const id of ids) expect(screen).toContain(id);
    expect(screen).toMatch(/alpha, enabled/);
    await term.send('C-c');
    await term.send('clear', 'Enter');
    await term.waitFor(/^zsh> $/m);
    await term.send('svc --profile w', 'Tab');
    await term.waitFor('svc --profile work');
  });
});
