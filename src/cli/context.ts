import type { ApiClient, WaitEvent } from '../client/api.js';
import type { BaseUrlSource, KeySource, RequestOrigin } from '../client/errors.js';
import { DEFAULT_POLICY } from '../client/policy.js';
import type { Transport } from '../client/transport.js';
import { API_PREFIX, DEFAULT_BASE_URL } from '../contract/paths.js';
import { CliError, ExitCode, NotAuthenticatedError, UsageError } from './errors.js';
import { isLoopbackHost } from '../client/loopback.js';
import { isWellFormedKey, keyHint } from '../contract/key-format.js';
import type { ConfigStore } from './config/store.js';
import type { Deps } from './deps.js';
import type { IO } from './io.js';
import { Messages, relativeTime, visible } from './output.js';
import { readKeyList } from '../client/key-view.js';
import type { Prompter } from './prompt.js';

/** The program-wide options of docs/contract.md §C2, as commander hands them over. */
export interface GlobalOptions {
  json?: boolean;
  quiet?: boolean;
  /** False with --no-input. */
  input: boolean;
  baseUrl?: string;
  profile?: string;
  timeout?: number;
  wait: boolean;
  maxWait: number;
  verbose?: boolean;
}

export type { BaseUrlSource, KeySource };

export interface Credentials {
  apiKey: string;
  source: KeySource;
}

const DEFAULT_TIMEOUT_MS = 10_000;

const BASE_URL_NAMES: Record<BaseUrlSource, string> = {
  flag: '--base-url',
  env: 'SVC_BASE_URL',
  profile: 'The profile\'s base URL',
  default: 'The default base URL',
};

/**
 * What a command runs with: the terminal, the options, and lazily the config
 * store, credentials, HTTP client and prompts, so a command pays only for
 * what it touches.
 */
export class Context {
  readonly msg: Messages;
  readonly profileName: string;
  /** The key this command's clients send; what the after-command warnings are about. */
  private keyUsed: Credentials | undefined;
  private configStore: ConfigStore | undefined;
  private resolvedBaseUrl: Promise<{ url: string; source: BaseUrlSource }> | undefined;
  /** The key in use as the last key list showed it; the expiry warning reads it. */
  private keyInUse: { id: string; expiresAt: number | null; nowMs: number } | undefined;
  /** One connection pool for every client this command makes. */
  private transport: Transport | undefined;

  constructor(
    readonly io: IO,
    readonly globals: GlobalOptions,
    readonly deps: Deps,
  ) {
    this.msg = new Messages(io, globals.quiet);
    this.profileName = globals.profile || io.env.SVC_PROFILE || 'default';
  }

  /** A fresh context for another profile: nothing resolved is carried over. */
  withProfile(profile: string): Context {
    return new Context(this.io, { ...this.globals, profile }, this.deps);
  }

  /** Prompts need a person: TTYs both ways, no --no-input, not CI. */
  get canPrompt(): boolean {
    const { io, globals } = this;
    return io.stdinIsTTY && io.stderrIsTTY && globals.input !== false && !io.env.CI;
  }

  get timeoutMs(): number {
    return this.globals.timeout ?? DEFAULT_TIMEOUT_MS;
  }

  async config(): Promise<ConfigStore> {
    if (!this.configStore) {
      const { openConfig } = await import('./config/store.js');
      this.configStore = openConfig(this.io.env, (line) => this.msg.warn(line));
    }
    return this.configStore;
  }

  async baseUrl(): Promise<string> {
    return (await this.resolveBaseUrl()).url;
  }

  /** docs/contract.md §C1: flag, then env, then profile, then the local reference server; checked once per command. */
  resolveBaseUrl(): Promise<{ url: string; source: BaseUrlSource }> {
    this.resolvedBaseUrl ??= this.findBaseUrl().then(({ url, source }) => ({ url: this.checkBaseUrl(url, source), source }));
    return this.resolvedBaseUrl;
  }

  private async findBaseUrl(): Promise<{ url: string; source: BaseUrlSource }> {
    if (this.globals.baseUrl) return { url: this.globals.baseUrl, source: 'flag' };
    if (this.io.env.SVC_BASE_URL) return { url: this.io.env.SVC_BASE_URL, source: 'env' };
    const saved = (await this.config()).getProfile(this.profileName).baseUrl;
    return saved ? { url: saved, source: 'profile' } : { url: DEFAULT_BASE_URL, source: 'default' };
  }

  /**
   * An absolute http(s) URL, or a usage error before any request. One that
   * already ends in the API prefix would double it; svc adds the prefix
   * itself, so it is taken off, and the person told.
   */
  private checkBaseUrl(raw: string, source: BaseUrlSource): string {
    const from = BASE_URL_NAMES[source];
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new UsageError(`${from} is not a URL: '${visible(raw)}'. Give the whole address, e.g. https://api.example.com.`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new UsageError(`${from} must be an http:// or https:// address, not '${visible(raw)}'.`);
    }
    const path = basePath(url);
    if (path === url.pathname.replace(/\/+$/, '')) return raw.replace(/\/+$/, '');
    url.pathname = path;
    const fixed = url.toString().replace(/\/+$/, '');
    this.msg.warn(`${from} ends in ${API_PREFIX}, which svc adds to every path itself: using ${fixed}.`);
    return fixed;
  }

  /**
   * The key in use, or null when none is configured. A key from the
   * environment is trimmed and must have the key format: a stray newline
   * or quote would otherwise fail every request in ways no retry mends.
   */
  async findCredentials(): Promise<Credentials | null> {
    const fromEnv = this.io.env.SVC_API_KEY?.trim();
    if (fromEnv) {
      if (!isWellFormedKey(fromEnv)) {
        throw new UsageError('SVC_API_KEY does not hold an API key (sk_ followed by 64 letters and digits); its value is not shown here.');
      }
      return { apiKey: fromEnv, source: 'env' };
    }
    const apiKey = (await this.config()).getProfile(this.profileName).apiKey;
    return apiKey ? { apiKey, source: 'profile' } : null;
  }

  async credentials(): Promise<Credentials> {
    const found = await this.findCredentials();
    if (!found) throw new NotAuthenticatedError(`No API key is configured for profile '${this.profileName}'.`, this.profileName);
    return found;
  }

  /** An API client for the configured key, or for `credentials` when given (login). */
  async client(credentials?: Credentials): Promise<ApiClient> {
    // The client's modules load while the profile is read: each dynamic
    // import waits on its own file reads, so chained ones add up.
    const modules = Promise.all([import('../client/api.js'), import('../client/transport.js'), import('./wait.js')]);
    // Awaited below unless reading the key fails first; that failure is the one to report.
    modules.catch(() => {});
    const creds = credentials ?? (await this.credentials());
    this.keyUsed = creds;
    const [[{ ApiClient }, { createUndiciTransport }, { waitWithCountdown }], base] = await Promise.all([modules, this.resolveBaseUrl()]);
    const { globals, io, deps } = this;
    const baseUrl = base.url;
    this.checkKeyMayGo(base, await this.savedKeyBaseUrl(creds));
    const origin: RequestOrigin = {
      baseUrl,
      baseUrlSource: base.source,
      overriddenBaseUrl: await this.overriddenBaseUrl(creds, base),
      keyHint: keyHint(creds.apiKey),
      keySource: creds.source,
      profile: this.profileName,
    };
    const log = globals.verbose ? (line: string) => io.stderr.write(`${line}\n`) : undefined;
    this.transport ??= deps.transport ?? createUndiciTransport({
      proxy: {
        httpProxy: io.env.http_proxy || io.env.HTTP_PROXY || '',
        httpsProxy: io.env.https_proxy || io.env.HTTPS_PROXY || '',
        noProxy: io.env.no_proxy || io.env.NO_PROXY || '',
      },
      log,
    });
    return new ApiClient({
      baseUrl,
      apiKey: creds.apiKey,
      timeoutMs: this.timeoutMs,
      policy: { ...DEFAULT_POLICY, waitOnRateLimit: globals.wait !== false, maxWaitSeconds: globals.maxWait },
      transport: this.transport,
      userAgent: `svc/${SVC_VERSION} node/${process.versions.node}`,
      wait: (event: WaitEvent) => waitWithCountdown(io, this.msg, event, deps),
      now: deps.now,
      random: deps.random,
      onKeyList: (body, nowMs) => this.noteKeyInUse(creds, body, nowMs),
      log,
      origin,
    });
  }

  /**
   * The profile's saved server when --base-url or SVC_BASE_URL sends a key
   * being logged in elsewhere, so a 401 can say so. A saved key never goes
   * elsewhere (checkKeyMayGo), and a key from SVC_API_KEY belongs to no profile.
   */
  private async overriddenBaseUrl(creds: Credentials, base: { url: string; source: BaseUrlSource }): Promise<string | null> {
    if (creds.source !== 'login' || (base.source !== 'flag' && base.source !== 'env')) return null;
    const saved = (await this.config()).getProfile(this.profileName).baseUrl;
    return saved && !sameServer(saved, base.url) ? saved : null;
  }

  /** The profile's key was replaced during the command (a rotation saved): the after-command warnings are about the new one. */
  keyReplaced(apiKey: string): void {
    this.keyUsed = { apiKey, source: 'profile' };
  }

  /** Remembers when the key in use expires, from a key list this command read anyway. */
  private noteKeyInUse(creds: Credentials, body: unknown, nowMs: number): void {
    const hint = keyHint(creds.apiKey);
    const mine = readKeyList(body).find((key) => key.hint === hint);
    if (mine && mine.id !== null && mine.expiresKnown) this.keyInUse = { id: mine.id, expiresAt: mine.expiresAt, nowMs };
  }

  /**
   * What a command that used a key owes on stderr once it is done (docs/contract.md
   * §C8): that the key expires soon, and that a rotation is pending. Once
   * each, never with --quiet. A saved key's expiry is kept in the profile,
   * so commands that read no key list can warn too; the profile is read only
   * when the command opened it anyway.
   */
  async afterCommand(): Promise<void> {
    const creds = this.keyUsed;
    if (!creds) return;
    const hint = keyHint(creds.apiKey);
    const config = this.configStore;
    const profile = config?.getProfile(this.profileName);
    if (config && profile && this.keyInUse && profile.apiKey === creds.apiKey) {
      const { id, expiresAt } = this.keyInUse;
      const keyExpiry = { hint, id, expiresAt: expiresAt === null ? null : new Date(expiresAt).toISOString() };
      if (JSON.stringify(profile.keyExpiry) !== JSON.stringify(keyExpiry)) config.setProfile(this.profileName, { ...profile, keyExpiry });
    }
    if (this.globals.quiet) return;
    const saved = profile?.keyExpiry?.hint === hint ? profile.keyExpiry : undefined;
    const known = this.keyInUse ?? (saved && { id: saved.id, expiresAt: saved.expiresAt === null ? null : Date.parse(saved.expiresAt), nowMs: this.deps.now() });
    const days = warningDays(this.io.env.SVC_EXPIRY_WARNING_DAYS);
    if (known && known.expiresAt !== null && days > 0 && known.expiresAt - known.nowMs <= days * 86_400_000) {
      const when = new Date(known.expiresAt).toISOString();
      const left = known.expiresAt > known.nowMs ? `expires ${relativeTime(known.expiresAt, known.nowMs)} (${when})` : `expired at ${when}`;
      this.msg.warn(`The key in use (${hint}) ${left}: replace it with \`svc keys rotate ${visible(known.id)}\`.`);
    }
    const pending = profile?.pendingRotation;
    if (pending) {
      this.msg.warn(
        `A rotation is pending in profile '${this.profileName}' since ${pending.since}: ${visible(pending.oldId)} still works beside ${visible(pending.newId)}. ` +
          'Once everything uses the new key: `svc keys rotate --finish` (or `--cancel`).',
      );
    }
  }

  /** The server a profile's key was saved for (docs/contract.md §C1); null for a key not from the profile. */
  private async savedKeyBaseUrl(creds: Credentials): Promise<string | null> {
    if (creds.source !== 'profile') return null;
    return (await this.config()).getProfile(this.profileName).baseUrl ?? DEFAULT_BASE_URL;
  }

  /**
   * A key goes only where it may (docs/contract.md §C1): never in clear text off
   * this machine, and a saved key only to the server it was saved for.
   */
  private checkKeyMayGo(base: { url: string; source: BaseUrlSource }, savedFor: string | null): void {
    const { hostname, protocol } = new URL(base.url);
    if (protocol === 'http:' && !isLoopbackHost(hostname) && this.io.env.SVC_ALLOW_HTTP !== '1') {
      throw new UsageError(
        `${base.url} is plain http: svc does not send a key in clear text to another machine. Use https, or set SVC_ALLOW_HTTP=1 if the network is yours.`,
      );
    }
    if (savedFor !== null && !sameServer(savedFor, base.url)) {
      throw new CliError(
        [
          `The key of profile '${this.profileName}' belongs to ${savedFor}, but ${BASE_URL_NAMES[base.source]} points at ${base.url}; the key was not sent.`,
          `Log in for that server in a profile of its own (svc login --profile NAME --base-url ${base.url}), or give its key in SVC_API_KEY.`,
        ].join('\n'),
        ExitCode.unauthenticated,
      );
    }
  }

  async prompts(): Promise<Prompter> {
    if (this.deps.prompter) return this.deps.prompter;
    const { createPrompter } = await import('./prompt.js');
    return createPrompter(this.io);
  }
}

/** SVC_EXPIRY_WARNING_DAYS: 7 by default, 0 for never; a value that is no number of days leaves the default. */
function warningDays(value: string | undefined): number {
  const days = Number(value);
  return value !== undefined && value.trim() !== '' && Number.isFinite(days) && days >= 0 ? days : 7;
}

/** Two base URLs name the same server: same scheme, host, port and path (case, trailing slashes and the API prefix aside). */
function sameServer(a: string, b: string): boolean {
  const key = (url: string) => {
    const parsed = new URL(url);
    return parsed.origin + basePath(parsed);
  };
  return key(a) === key(b);
}

/** A base URL's path without trailing slashes or the API prefix, which svc adds itself. */
function basePath(url: URL): string {
  const path = url.pathname.replace(/\/+$/, '');
  return path.endsWith(API_PREFIX) ? path.slice(0, -API_PREFIX.length) : path;
}

export function createContext(io: IO, globals: GlobalOptions, deps: Deps): Context {
  return new Context(io, globals, deps);
}
