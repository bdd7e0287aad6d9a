import { mkdtempSync, rmSync, statSync, writeFileSync, chmodSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Context, type GlobalOptions } from '../../src/cli/context.js';
import { CliError, ExitCode } from '../../src/cli/errors.js';
import { memoryIO } from '../helpers/memory-io.js';

const globals = (over: Partial<GlobalOptions> = {}): GlobalOptions => ({
  json: false,
  quiet: false,
  input: true,
  wait: true,
  maxWait: 300,
  verbose: false,
  ...over,
});

const ENV_KEY = `sk_${'E'.repeat(64)}`;
const SAVED_KEY = `sk_${'P'.repeat(64)}`;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-ctx-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function context(env: NodeJS.ProcessEnv, over: Partial<GlobalOptions> = {}, tty = false) {
  const { io } = memoryIO({ env: { SVC_CONFIG_DIR: dir, ...env }, stdinIsTTY: tty, stderrIsTTY: tty });
  return new Context(io, globals(over));
}

describe('where the key, address and profile come from (CONTRACT §C1)', () => {
  it('prefers SVC_API_KEY over the profile', async () => {
    const ctx = context({});
    (await ctx.config()).setProfile('default', { apiKey: SAVED_KEY });
    expect(await context({}).credentials()).toEqual({ apiKey: SAVED_KEY, source: 'profile' });
    expect(await context({ SVC_API_KEY: ENV_KEY }).credentials()).toEqual({ apiKey: ENV_KEY, source: 'env' });
  });

  it('picks the profile from --profile, then SVC_PROFILE, then default', async () => {
    expect(context({}).profileName).toBe('default');
    expect(context({ SVC_PROFILE: 'ci' }).profileName).toBe('ci');
    expect(context({ SVC_PROFILE: 'ci' }, { profile: 'prod' }).profileName).toBe('prod');
  });

  it('orders base URLs flag > env > profile > local default', async () => {
    (await context({}).config()).setProfile('default', { baseUrl: 'http://profile.test' });
    expect(await context({}).resolveBaseUrl()).toEqual({ url: 'http://profile.test', source: 'profile' });
    expect(await context({ SVC_BASE_URL: 'http://env.test' }).resolveBaseUrl()).toEqual({ url: 'http://env.test', source: 'env' });
    expect(await context({ SVC_BASE_URL: 'http://env.test' }, { baseUrl: 'http://flag.test' }).resolveBaseUrl()).toEqual({
      url: 'http://flag.test',
      source: 'flag',
    });
    expect(await context({}, { profile: 'other' }).resolveBaseUrl()).toEqual({ url: 'http://127.0.0.1:8787', source: 'default' });
  });

  it('says how to log in when no key is configured (exit 3)', async () => {
    const error = await context({}).credentials().catch((e) => e);
    expect(error).toBeInstanceOf(CliError);
    expect(error.exitCode).toBe(ExitCode.unauthenticated);
    expect(error.message).toContain('svc login');
  });
});

describe('the config store', () => {
  it('keeps the file 0600 and the directory 0700, tightening looser modes', async () => {
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'config.json'), '{"profiles":{}}', { mode: 0o644 });
    const config = await context({}).config();
    config.setProfile('default', { apiKey: SAVED_KEY });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(config.path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(config.path, 'utf8')).profiles.default.apiKey).toBe(SAVED_KEY);
  });

  it('turns a corrupt file into one clear message', async () => {
    writeFileSync(join(dir, 'config.json'), '{ not json');
    const error = await context({}).config().catch((e) => e);
    expect(error).toBeInstanceOf(CliError);
    expect(error.message).toMatch(/config file .*config\.json could not be read/);
    expect(readFileSync(join(dir, 'config.json'), 'utf8')).toBe('{ not json');
  });
});

describe('when svc may prompt (CONTRACT §C3)', () => {
  it('needs TTYs, no --no-input and no CI', () => {
    expect(context({}, {}, true).canPrompt).toBe(true);
    expect(context({}, {}, false).canPrompt).toBe(false);
    expect(context({}, { input: false }, true).canPrompt).toBe(false);
    expect(context({ CI: 'true' }, {}, true).canPrompt).toBe(false);
    expect(context({ CI: '' }, {}, true).canPrompt).toBe(true);
  });
});
