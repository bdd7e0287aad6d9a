// tier: in-process
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Renderer } from '../../src/cli/terminal/renderer.js';
import { baseSession, canPrompt, resolveSession, type GlobalOptions } from '../../src/cli/session/session.js';
import { CliError, ExitCode } from '../../src/cli/errors/errors.js';
import { realDeps } from '../../src/cli/terminal/deps.js';
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

/** The session's parts as a command resolves them, one resolution per call. */
function context(env: NodeJS.ProcessEnv, over: Partial<GlobalOptions> = {}, tty = false) {
  const { io } = memoryIO({ env: { SVC_CONFIG_DIR: dir, ...env }, stdinIsTTY: tty, stderrIsTTY: tty });
  const options = globals(over);
  return {
    profileName: baseSession(io, options, realDeps, new Renderer(io, { quiet: false }, {})).profileName,
    canPrompt: canPrompt(io, options),
    credentials: async () => (await resolveSession(io, options, realDeps, 'key')).credentials,
    resolveBaseUrl: async () => {
      const { url, source } = (await resolveSession(io, options, realDeps, 'profile')).endpoint;
      return { url, source };
    },
    client: async () => (await resolveSession(io, options, realDeps, 'key')).client,
    config: async () => (await resolveSession(io, options, realDeps, 'profile')).config,
  };
}

describe('the session: where the key, address and profile come from (docs/contract.md §C1)', () => {
  it('prefers SVC_API_KEY over the profile', async () => {
    const ctx = context({});
    await (await ctx.config()).update('default', () => ({ apiKey: SAVED_KEY }));
    expect(await context({}).credentials()).toEqual({ apiKey: SAVED_KEY, source: 'profile', store: 'file' });
    expect(await context({ SVC_API_KEY: ENV_KEY }).credentials()).toEqual({ apiKey: ENV_KEY, source: 'env' });
  });

  it('picks the profile from --profile, then SVC_PROFILE, then default', async () => {
    expect(context({}).profileName).toBe('default');
    expect(context({ SVC_PROFILE: 'ci' }).profileName).toBe('ci');
    expect(context({ SVC_PROFILE: 'ci' }, { profile: 'prod' }).profileName).toBe('prod');
  });

  it('orders base URLs flag > env > profile > local default', async () => {
    await (await context({}).config()).update('default', () => ({ baseUrl: 'http://profile.test' }));
    expect(await context({}).resolveBaseUrl()).toEqual({ url: 'http://profile.test', source: 'profile' });
    expect(await context({ SVC_BASE_URL: 'http://env.test' }).resolveBaseUrl()).toEqual({ url: 'http://env.test', source: 'env' });
    expect(await context({ SVC_BASE_URL: 'http://env.test' }, { baseUrl: 'http://flag.test' }).resolveBaseUrl()).toEqual({
      url: 'http://flag.test',
      source: 'flag',
    });
    expect(await context({}, { profile: 'other' }).resolveBaseUrl()).toEqual({ url: 'http://127.0.0.1:8787', source: 'default' });
  });

  it('trims SVC_API_KEY, and refuses one that is not a key without echoing it (exit 2)', async () => {
    expect(await context({ SVC_API_KEY: ` ${ENV_KEY}\r\n` }).credentials()).toEqual({ apiKey: ENV_KEY, source: 'env' });
    for (const bad of [`${ENV_KEY}\nX-Evil: 1`, 'sk_short', `"${ENV_KEY}"`]) {
      const error = await context({ SVC_API_KEY: bad }).credentials().catch((e) => e);
      expect(error.exitCode, bad).toBe(ExitCode.usage);
      expect(error.message).toContain('SVC_API_KEY');
      expect(error.message).not.toContain(ENV_KEY.slice(3, 20));
    }
  });

  it('refuses a base URL that is not an absolute http(s) URL (exit 2)', async () => {
    for (const url of ['127.0.0.1:8788', 'example.com', 'ftp://example.com', '']) {
      const error = await context({}, { baseUrl: url || ' ' }).resolveBaseUrl().catch((e) => e);
      expect(error.exitCode, url).toBe(ExitCode.usage);
    }
  });

  it('never sends a key in clear text to another machine without SVC_ALLOW_HTTP=1 (exit 2)', async () => {
    const error = await context({ SVC_API_KEY: ENV_KEY }, { baseUrl: 'http://api.example.com' }).client().catch((e) => e);
    expect(error.exitCode).toBe(ExitCode.usage);
    expect(error.message).toContain('SVC_ALLOW_HTTP=1');
    for (const url of ['http://127.0.0.2:1', 'http://localhost:1', 'http://[::1]:1', 'https://api.example.com']) {
      await expect(context({ SVC_API_KEY: ENV_KEY }, { baseUrl: url }).client(), url).resolves.toBeDefined();
    }
    await expect(context({ SVC_API_KEY: ENV_KEY, SVC_ALLOW_HTTP: '1' }, { baseUrl: 'http://api.example.com' }).client()).resolves.toBeDefined();
  });

  it('sends a saved key only to the server it was saved for (exit 3); SVC_API_KEY goes where the URL says', async () => {
    await (await context({}).config()).update('default', () => ({ apiKey: SAVED_KEY, baseUrl: 'https://a.example.com' }));
    await expect(context({}, { baseUrl: 'https://a.example.com/' }).client()).resolves.toBeDefined();
    await expect(context({ SVC_BASE_URL: 'https://A.example.com/api/service' }).client()).resolves.toBeDefined();
    const error = await context({ SVC_BASE_URL: 'https://b.example.com' }).client().catch((e) => e);
    expect(error.exitCode).toBe(ExitCode.unauthenticated);
    expect(error.message).toContain("The key of profile 'default' belongs to https://a.example.com, but SVC_BASE_URL points at https://b.example.com");
    await expect(context({ SVC_API_KEY: ENV_KEY }, { baseUrl: 'https://b.example.com' }).client()).resolves.toBeDefined();
  });

  it('binds a key saved without an address to the local default', async () => {
    await (await context({}).config()).update('default', () => ({ apiKey: SAVED_KEY }));
    await expect(context({}).client()).resolves.toBeDefined();
    const error = await context({}, { baseUrl: 'https://b.example.com' }).client().catch((e) => e);
    expect(error.message).toContain('belongs to http://127.0.0.1:8787');
  });

  it('says how to log in when no key is configured (exit 3)', async () => {
    const error = await context({}).credentials().catch((e) => e);
    expect(error).toBeInstanceOf(CliError);
    expect(error.exitCode).toBe(ExitCode.unauthenticated);
    expect(error.message).toContain('svc login');
  });
});

describe('the config store', () => {
  it('creates its directory 0700 and its file 0600', async () => {
    const fresh = join(dir, 'new', 'svc');
    const config = await context({ SVC_CONFIG_DIR: fresh }).config();
    await config.update('default', () => ({ apiKey: SAVED_KEY }));
    expect(statSync(fresh).mode & 0o777).toBe(0o700);
    expect(statSync(config.path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(config.path, 'utf8')).profiles.default.apiKey).toBe(SAVED_KEY);
  });

  it('tightens its own readable file with a warning, and leaves a directory it did not create alone', async () => {
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'config.json'), '{"profiles":{}}', { mode: 0o644 });
    const { io, stderr } = memoryIO({ env: { SVC_CONFIG_DIR: dir } });
    await resolveSession(io, globals(), realDeps, 'profile');
    expect(statSync(dir).mode & 0o777).toBe(0o755);
    expect(statSync(join(dir, 'config.json')).mode & 0o777).toBe(0o600);
    expect(stderr()).toContain('was readable by other users');
  });

  const refused = async (env: NodeJS.ProcessEnv, pattern: RegExp) => {
    const error = await context(env).config().catch((e) => e);
    expect(error).toBeInstanceOf(CliError);
    expect(error.exitCode).toBe(ExitCode.failure);
    expect(error.message).toMatch(pattern);
  };

  it('refuses a directory others can write, a shared sticky one included, and does not chmod it', async () => {
    chmodSync(dir, 0o1777);
    await refused({}, /Refusing to use the config directory .*other users can write to it \(mode 1777\)/);
    expect(statSync(dir).mode & 0o7777).toBe(0o1777);
  });

  it('refuses a file others can write', async () => {
    writeFileSync(join(dir, 'config.json'), '{"profiles":{}}', { mode: 0o600 });
    chmodSync(join(dir, 'config.json'), 0o666);
    await refused({}, /config file .*other users can write to it \(mode 0666\)/);
    expect(statSync(join(dir, 'config.json')).mode & 0o777).toBe(0o666);
  });

  it.skipIf(process.getuid?.() !== 0)('refuses a directory or file of another user (as root, chown makes one)', async () => {
    const other = join(dir, 'theirs');
    mkdirSync(other, { mode: 0o700 });
    chownSync(other, 12345, 12345);
    await refused({ SVC_CONFIG_DIR: other }, /belongs to another user \(uid 12345\)/);
    writeFileSync(join(dir, 'config.json'), '{"profiles":{}}', { mode: 0o600 });
    chownSync(join(dir, 'config.json'), 12345, 12345);
    await refused({}, /config file .*belongs to another user/);
  });

  it('follows a symlinked file only to a target that passes the same test', async () => {
    const safe = mkdtempSync(join(tmpdir(), 'svc-target-'));
    const shared = mkdtempSync(join(tmpdir(), 'svc-shared-'));
    try {
      writeFileSync(join(safe, 'real.json'), JSON.stringify({ profiles: { default: { apiKey: SAVED_KEY } } }), { mode: 0o600 });
      symlinkSync(join(safe, 'real.json'), join(dir, 'config.json'));
      expect((await context({}).config()).getProfile('default').apiKey).toBe(SAVED_KEY);

      chmodSync(shared, 0o777);
      writeFileSync(join(shared, 'real.json'), '{"profiles":{}}', { mode: 0o600 });
      rmSync(join(dir, 'config.json'));
      symlinkSync(join(shared, 'real.json'), join(dir, 'config.json'));
      await refused({}, /directory of the config file's link target .*other users can write/);
    } finally {
      rmSync(safe, { recursive: true, force: true });
      rmSync(shared, { recursive: true, force: true });
    }
  });

  it('turns a corrupt file into one clear message', async () => {
    writeFileSync(join(dir, 'config.json'), '{ not json');
    const error = await context({}).config().catch((e) => e);
    expect(error).toBeInstanceOf(CliError);
    expect(error.message).toMatch(/config file .*config\.json could not be read/);
    expect(readFileSync(join(dir, 'config.json'), 'utf8')).toBe('{ not json');
  });
});

describe('when svc may prompt (docs/contract.md §C3)', () => {
  it('needs TTYs, no --no-input and no CI', () => {
    expect(context({}, {}, true).canPrompt).toBe(true);
    expect(context({}, {}, false).canPrompt).toBe(false);
    expect(context({}, { input: false }, true).canPrompt).toBe(false);
    expect(context({ CI: 'true' }, {}, true).canPrompt).toBe(false);
    expect(context({ CI: '' }, {}, true).canPrompt).toBe(true);
  });
});
