/**
 * What one command (or one action of the interactive manager) runs with,
 * resolved once before it starts and never written back: the options, the
 * profile as it was read, where requests go, the key and where it came
 * from, one deadline, and the means to print, ask and connect. A command
 * that changes the profile does so through the config writer and gets a
 * new session for whatever comes after.
 */
import type { ApiClient, WaitEvent } from '../../client/api.js';
import { chooseProxy, unusableProxyMessage, type ProxySettings, type ProxyVariable } from '../../client/proxy.js';
import type { BaseUrlSource, KeySource, RequestOrigin } from '../../client/errors.js';
import { DEFAULT_POLICY } from '../../client/policy.js';
import { DEFAULT_BASE_URL } from '../../contract/paths.js';
import { isWellFormedKey, keyHint } from '../../contract/key-format.js';
import type { ConfigStore, Profile } from '../config/store.js';
import type { Deps } from '../terminal/deps.js';
import { checkKeyMayGo, resolveEndpoint, sameServer, type Endpoint } from './endpoint.js';
import { CliError, loginCommand, NotAuthenticatedError, UnknownProfileError, UsageError } from '../errors/errors.js';
import type { IO } from '../terminal/io.js';
import type { Prompter } from '../terminal/prompt.js';
import { createRenderer, type Renderer } from '../terminal/renderer.js';
import { clip, shellWord } from '../text/text.js';
import { nearProfile } from '../domain/suggest.js';
import { readEnv } from '../terminal/environment.js';
import { findProjectProfile, type RefusedProjectFile } from './project-profile.js';
import type { KeyStore } from '../secret-store/saved-key.js';

/** The program-wide options of docs/contract.md §C2, as commander hands them over. */
export interface GlobalOptions {
  json?: boolean;
  /** --query's JMESPath expression; it sets `json` too. */
  query?: string;
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
  /** Where a profile's key was kept: the config file or the OS keyring. */
  store?: KeyStore;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** What every command has, whether or not it reads the profile. */
export interface Session {
  readonly io: IO;
  readonly deps: Deps;
  readonly options: Readonly<GlobalOptions>;
  readonly render: Renderer;
  readonly profileName: string;
  /** A person can be asked: TTYs both ways, no --no-input, not CI. */
  readonly canPrompt: boolean;
  /** Nobody is to be waited for (--no-input, or CI set): neither a question nor text typed on a terminal. */
  readonly unattended: boolean;
  readonly timeoutMs: number;
  /** When the command must be over (budgetNow's clock): every attempt's timeout is cut to it. */
  readonly deadlineMs: number;
  /** When every wait, rate limits and retries alike, must be over: the start plus --max-wait (docs/contract.md §C4). */
  readonly waitUntilMs: number;
  /**
   * The clock `deadlineMs` and `waitUntilMs` are on: deps.now less the time
   * spent in questions, since a person's time at a prompt is not the
   * server's (a manager left at "Expires in" for ten minutes still gets its
   * whole timeout for the create after it).
   */
  budgetNow(): number;
  /** The one prompter (docs/contract.md §C7): Esc or Ctrl-C in any question is a PromptCancelledError. */
  prompts(): Promise<Prompter>;
}

/** Where the profile's name came from: --profile, SVC_PROFILE, a project's `.svc-profile`, the config's default (`svc profile use`), or `default`. */
export type ProfileSource = 'flag' | 'env' | 'project' | 'config' | 'default';

/** A session that has read the profile. */
export interface ProfileSession extends Session {
  readonly config: ConfigStore;
  readonly profileSource: ProfileSource;
  /** The `.svc-profile` that named the profile, when `profileSource` is 'project'. */
  readonly profileFile: string | null;
  /**
   * The config file has this profile, or it is `default` or the config's
   * default profile (both of which exist without a key). A profile that
   * does not exist is made by `svc login --profile NAME`.
   */
  readonly profileExists: boolean;
  /** The profile as it was when the command started. */
  readonly profile: Readonly<Profile>;
  readonly endpoint: Endpoint;
  /**
   * The key in use: SVC_API_KEY, else the profile's; null when there is
   * none, or when it is in the keyring and the command did not ask for it
   * (needs 'profile') or the keyring failed (`keyFailure`).
   */
  readonly credentials: Credentials | null;
  /** Why the profile's key could not be read from the keyring (needs 'credentials'). */
  readonly keyFailure?: CliError;
}

/** A session with a key and a client for it. */
export interface KeySession extends ProfileSession {
  readonly credentials: Credentials;
  readonly client: ApiClient;
}

/**
 * What a command needs resolved: nothing; the profile (a key kept in the
 * keyring is not read); the profile, to change it (as 'profile', but a
 * project file that named another is no guess to act on: login, logout);
 * the profile and its key, a keyring failure kept in `keyFailure` for the
 * command to show; or a working key.
 */
export type Needs = 'nothing' | 'profile' | 'change' | 'credentials' | 'key';

/** The resolved session for what a command needs. */
export type SessionFor<N extends Needs> = N extends 'key' ? KeySession : N extends 'profile' | 'change' | 'credentials' ? ProfileSession : Session;

/** A person can be asked: TTYs both ways, no --no-input, not CI. */
export function canPrompt(io: IO, options: GlobalOptions): boolean {
  return io.stdinIsTTY && io.stderrIsTTY && !unattended(io, options);
}

function unattended(io: IO, options: GlobalOptions): boolean {
  return options.input === false || Boolean(readEnv(io.env, 'CI'));
}

/** The session's parts that read nothing; `render` made for `io` with --quiet as `options` say (createRenderer). */
export function baseSession(io: IO, options: GlobalOptions, deps: Deps, render: Renderer): Session {
  const timeoutMs = options.timeout ?? DEFAULT_TIMEOUT_MS;
  const started = deps.now();
  // Only the prompter below adds to it: the one clock of the session's that a question moves.
  let askedMs = 0;
  const timed = (prompter: Prompter): Prompter =>
    Object.fromEntries(
      Object.entries(prompter).map(([name, ask]) => [
        name,
        async (...args: unknown[]) => {
          const asked = deps.now();
          try {
            return await (ask as (...a: unknown[]) => Promise<unknown>)(...args);
          } finally {
            askedMs += deps.now() - asked;
          }
        },
      ]),
    ) as unknown as Prompter;
  return Object.freeze({
    io,
    deps,
    options: Object.freeze({ ...options }),
    render,
    profileName: options.profile || readEnv(io.env, 'SVC_PROFILE') || 'default',
    canPrompt: canPrompt(io, options),
    unattended: unattended(io, options),
    timeoutMs,
    deadlineMs: started + options.maxWait * 1000 + timeoutMs,
    waitUntilMs: started + options.maxWait * 1000,
    budgetNow: () => deps.now() - askedMs,
    async prompts() {
      const { createPrompter, escaped } = await import('../terminal/prompt.js');
      return timed(deps.prompter ? escaped(deps.prompter) : createPrompter(io));
    },
  });
}

/** Resolves what `needs` asks for; a missing key is NotAuthenticatedError, a bad address a UsageError, before any request. */
export async function resolveSession<N extends Needs>(io: IO, options: GlobalOptions, deps: Deps, needs: N): Promise<SessionFor<N>> {
  const base = baseSession(io, options, deps, await createRenderer(io, { quiet: options.quiet === true, query: options.query }));
  if (needs === 'nothing') return base as SessionFor<N>;
  const modules = needs === 'key' ? clientModules() : undefined;
  // Awaited in withKey unless reading the profile fails first; that failure is the one to report.
  modules?.catch(() => {});
  const withProfile = await readProfile(base, needs);
  if (needs !== 'key') return withProfile as SessionFor<N>;
  announceProfileFile(withProfile);
  if (!withProfile.credentials) throw noKeyError(withProfile);
  return withKey(withProfile, withProfile.credentials, modules) as Promise<SessionFor<N>>;
}

/**
 * One line when a project's `.svc-profile` chose the profile of a command
 * that sends its key or changes it (docs/contract.md §C1): a checked-out
 * repository can move such a command to another of your profiles, and
 * nothing else on the way would show it. Not with --quiet.
 */
export function announceProfileFile(session: ProfileSession): void {
  if (session.profileSource === 'project') session.render.info(`Using profile '${clip(session.profileName, 200)}' from ${session.profileFile}.`);
}

/** The client's modules, loading while the profile is read: each dynamic import waits on its own file reads, so chained ones add up. */
function clientModules() {
  return Promise.all([import('../../client/api.js'), import('../../client/transport.js'), import('../terminal/wait.js')]);
}

/**
 * Why there is no key to use (exit 3): the profile has none, or there is
 * no such profile, in which case the ones that exist are named.
 */
export function noKeyError(session: ProfileSession): CliError {
  const { profileName, profileExists, keyFailure } = session;
  if (keyFailure) return keyFailure;
  if (profileExists) return new NotAuthenticatedError(profileName, readEnv(session.io.env, 'SVC_API_KEY')?.trim() === '');
  return new UnknownProfileError(
    [noSuchProfile(session), `Run \`${loginCommand(profileName)}\` to create it with a key, or set SVC_API_KEY.`],
    otherProfiles(session),
  );
}

/** "Profile 'wrok' does not exist; the profiles are: default, work. Did you mean `--profile work`?" */
export function noSuchProfile(session: ProfileSession): string {
  const { profileName, profileSource, config } = session;
  const named = {
    flag: '',
    env: ' (SVC_PROFILE names it)',
    project: ` (${session.profileFile} names it)`,
    config: ` (the default profile in ${config.path})`,
    default: '',
  }[profileSource];
  return `Profile '${clip(profileName, 200)}' does not exist${named}; ${otherProfiles(session)}`;
}

/** "the profiles are: default, work. Did you mean `--profile work`?": what there is instead of a profile that does not exist. */
export function otherProfiles(session: ProfileSession): string {
  const { profileName, profileSource, config } = session;
  // Said the way the name was given, so that the fix is to retype that.
  const spell = {
    flag: (name: string) => `\`--profile ${shellWord(name)}\``,
    env: (name: string) => `SVC_PROFILE=${shellWord(name)}`,
    project: (name: string) => `'${clip(name, 200)}'`,
    config: (name: string) => `'${clip(name, 200)}'`,
    default: (name: string) => `'${clip(name, 200)}'`,
  }[profileSource];
  return `${knownProfiles(config)}.${nearProfile(profileName, profilesOf(config), spell)}`;
}

/** "the profiles are: default, work", for messages about a profile that does not exist. */
export function knownProfiles(config: ConfigStore): string {
  const names = profilesOf(config);
  return names.length === 0 ? 'there are no profiles yet' : `the profiles are: ${names.map((name) => clip(name, 200)).join(', ')}`;
}

/** Every profile that exists: those in the config file, the config's default and `default`. */
export function profilesOf(config: ConfigStore): string[] {
  const chosen = config.defaultProfile();
  const names = new Set(config.profileNames());
  if (chosen !== undefined) names.add(chosen);
  names.add('default');
  return [...names].sort();
}

async function readProfile(base: Session, needs: Exclude<Needs, 'nothing'>): Promise<ProfileSession> {
  const { io } = base;
  const config = await readConfig(base, needs);
  const named: ProfileSource | undefined = base.options.profile ? 'flag' : readEnv(io.env, 'SVC_PROFILE') ? 'env' : undefined;
  let refused: RefusedProjectFile | null = null;
  const project = named === undefined ? findProjectProfile(io.cwd, (refusal) => (refused = refusal), undefined, profilesOf(config)) : null;
  if (refused) ignoreProjectFile(base, needs, refused);
  const chosen = named === undefined && project === null ? config.defaultProfile() : undefined;
  const profileName = project?.name ?? chosen ?? base.profileName;
  const profileSource: ProfileSource = named ?? (project !== null ? 'project' : chosen === undefined ? 'default' : 'config');
  const profileExists = profilesOf(config).includes(profileName);
  const profile = Object.freeze(config.getProfile(profileName));
  const endpoint = resolveEndpoint({ flag: base.options.baseUrl, env: readEnv(io.env, 'SVC_BASE_URL'), profile: profile.baseUrl });
  if (endpoint.notice) base.render.warn(endpoint.notice);
  let credentials = findCredentials(io.env, profile);
  let keyFailure: CliError | undefined;
  if (credentials === null && profile.keyring && needs !== 'profile' && needs !== 'change') {
    // Loaded only here: a key from the environment or the file costs no keyring code at start-up.
    const { readKeyringKey, KeyringError } = await import('../secret-store/saved-key.js');
    const ctx = { config, env: io.env, schedule: base.deps.schedule };
    try {
      credentials = { apiKey: await readKeyringKey(ctx, profileName, profile.keyring), source: 'profile', store: 'keyring' };
    } catch (error) {
      if (!(error instanceof KeyringError) || needs === 'key') throw error;
      keyFailure = error;
    }
  }
  return Object.freeze({ ...base, profileName, profileSource, profileFile: project?.path ?? null, profileExists, config, profile, endpoint, credentials, keyFailure });
}

/**
 * The session of another profile (`svc status --all`): its own key and its
 * own saved server, as the profile would be used on its own, never
 * SVC_API_KEY, SVC_BASE_URL or --base-url, which belong to no profile. A
 * key the keyring does not give is `keyFailure`, as for 'credentials'.
 */
export async function profileSession(session: ProfileSession, profileName: string): Promise<ProfileSession> {
  const { config, io } = session;
  const profile = Object.freeze(config.getProfile(profileName));
  const endpoint = resolveEndpoint({ profile: profile.baseUrl });
  let credentials: Credentials | null = profile.apiKey ? { apiKey: profile.apiKey, source: 'profile', store: 'file' } : null;
  let keyFailure: CliError | undefined;
  if (credentials === null && profile.keyring) {
    const { readKeyringKey, KeyringError } = await import('../secret-store/saved-key.js');
    try {
      credentials = { apiKey: await readKeyringKey({ config, env: io.env, schedule: session.deps.schedule }, profileName, profile.keyring), source: 'profile', store: 'keyring' };
    } catch (error) {
      if (!(error instanceof KeyringError)) throw error;
      keyFailure = error;
    }
  }
  return Object.freeze({
    ...session,
    profileName,
    profileSource: 'flag' as const,
    profileFile: null,
    profileExists: true,
    profile,
    endpoint,
    credentials,
    keyFailure,
  });
}

/**
 * A project's `.svc-profile` svc will not take (docs/contract.md §C1). It
 * chose the profile, so another would be a guess: a command that changes
 * the profile stops, and so does one that sends the key, unless its key and
 * server both come from outside the profile (SVC_API_KEY with SVC_BASE_URL
 * or --base-url). Any other goes on with the saved default, saying so.
 */
function ignoreProjectFile(base: Session, needs: Exclude<Needs, 'nothing'>, { path, why }: RefusedProjectFile): void {
  // A refusal may end in a question of its own (a did-you-mean).
  const said = `${path} ${why}`;
  if (needs === 'change' || (needs === 'key' && !keyAndServerFromOutside(base))) {
    throw new UnknownProfileError([
      said.endsWith('?') ? said : `${said}.`,
      'It chooses the profile here, so svc will not use another one: fix the file, or name the profile with --profile or SVC_PROFILE.',
    ]);
  }
  base.render.warn(said.endsWith('?') ? `${said} It was ignored, and the default profile applies.` : `${said}; it was ignored, and the default profile applies.`);
}

/** The key from SVC_API_KEY and the server from --base-url or SVC_BASE_URL: nothing of a profile is used. */
function keyAndServerFromOutside({ io, options }: Session): boolean {
  return Boolean(readEnv(io.env, 'SVC_API_KEY')?.trim()) && Boolean(options.baseUrl || readEnv(io.env, 'SVC_BASE_URL'));
}

/**
 * The config file, for reading the profile. A command whose key and server
 * both come from the environment or the flags (a CI job: SVC_API_KEY and
 * SVC_BASE_URL) needs nothing from it: a file svc cannot open (broken,
 * planted, not a file) is said in one line and left unread, and a change
 * the command would save to it is refused with that reason.
 */
async function readConfig(base: Session, needs: Exclude<Needs, 'nothing'>): Promise<ConfigStore> {
  const { io } = base;
  const { openConfig, unopenedConfig } = await import('../config/store.js');
  const warn = (line: string) => base.render.warn(line);
  try {
    return openConfig(io.env, warn, { onSignal: base.deps.onSignal });
  } catch (error) {
    const needsNone = (needs === 'key' || needs === 'credentials') && keyAndServerFromOutside(base);
    if (!(error instanceof CliError) || !needsNone) throw error;
    warn(`${error.lines[0]} SVC_API_KEY and ${base.options.baseUrl ? '--base-url' : 'SVC_BASE_URL'} need nothing from it, so svc went on without it.`);
    return unopenedConfig(io.env, error);
  }
}

/**
 * The key in use, or null when none is configured. A key from the
 * environment is trimmed and must have the key format: a stray newline
 * or quote would otherwise fail every request in ways no retry mends.
 */
function findCredentials(env: NodeJS.ProcessEnv, profile: Readonly<Profile>): Credentials | null {
  const fromEnv = readEnv(env, 'SVC_API_KEY')?.trim();
  if (fromEnv) {
    if (!isWellFormedKey(fromEnv)) {
      throw new UsageError('SVC_API_KEY does not hold an API key (sk_ followed by 64 letters and digits); its value is not shown here.');
    }
    return { apiKey: fromEnv, source: 'env' };
  }
  return profile.apiKey ? { apiKey: profile.apiKey, source: 'profile', store: 'file' } : null;
}

/**
 * The session with `credentials` and a client for them: the configured
 * key, or the key `svc login` is checking. Refuses (before any request) to
 * send a key where it may not go.
 */
export async function withKey(session: ProfileSession, credentials: Credentials, modules = clientModules()): Promise<KeySession> {
  const { endpoint, profile, profileName, options, io, deps } = session;
  const [{ ApiClient }, { createUndiciTransport }, { waitWithCountdown, showingWaits, refusedHereIsFinal }] = await modules;
  const savedFor = credentials.source === 'profile' ? (profile.baseUrl ?? DEFAULT_BASE_URL) : null;
  checkKeyMayGo(endpoint, savedFor, profileName, readEnv(io.env, 'SVC_ALLOW_HTTP') === '1');
  const proxy = proxySettings(io.env);
  checkProxyUsable(proxy, endpoint.url);
  const origin: RequestOrigin = {
    baseUrl: endpoint.url,
    baseUrlSource: endpoint.source,
    overriddenBaseUrl: overriddenBaseUrl(credentials, endpoint, profile),
    keyHint: keyHint(credentials.apiKey),
    keySource: credentials.source,
    profile: profileName,
    profileFile: session.profileSource === 'project' ? session.profileFile : null,
    savedInstance: credentials.source === 'profile' ? (profile.serverInstance ?? null) : null,
    savedKeyExpiresAt: credentials.source === 'profile' ? recordedExpiry(profile, credentials.apiKey) : null,
  };
  const base =
    deps.transport ??
    createUndiciTransport({
      proxy,
      log: requestLog(session),
    });
  const transport = showingWaits(refusedHereIsFinal(base), endpoint.url, session.render, io, deps);
  const client = new ApiClient({
    baseUrl: endpoint.url,
    apiKey: credentials.apiKey,
    timeoutMs: session.timeoutMs,
    deadlineMs: session.deadlineMs,
    waitUntilMs: session.waitUntilMs,
    policy: { ...DEFAULT_POLICY, waitOnRateLimit: options.wait !== false, maxWaitSeconds: options.maxWait },
    transport,
    userAgent: `svc/${SVC_VERSION} node/${process.versions.node}`,
    wait: (event: WaitEvent) => waitWithCountdown(session.render, io, event, deps),
    now: deps.now,
    budgetNow: session.budgetNow,
    random: deps.random,
    log: requestLog(session),
    origin,
  });
  return Object.freeze({ ...session, credentials, client });
}

/**
 * The proxy variables, as curl reads them (libcurl-env(3); docs/contract.md
 * §C1): the lower-case name first; `http_proxy` in lower case only; an
 * empty variable as an unset one. client/proxy.ts decides from these.
 */
export function proxySettings(env: NodeJS.ProcessEnv): ProxySettings {
  const first = (...names: Parameters<typeof readEnv>[1][]): ProxyVariable | undefined => {
    for (const name of names) {
      const value = readEnv(env, name);
      if (value) return { name, value };
    }
    return undefined;
  };
  return {
    http: first('http_proxy'),
    https: first('https_proxy', 'HTTPS_PROXY'),
    all: first('all_proxy', 'ALL_PROXY'),
    noProxy: first('no_proxy', 'NO_PROXY'),
    upperHttpProxySet: Boolean(readEnv(env, 'HTTP_PROXY')) && !readEnv(env, 'http_proxy'),
  };
}

/** A proxy URL the base URL's requests would go through and that cannot be used: a usage error before any request, naming its variable. */
function checkProxyUsable(settings: ProxySettings, baseUrl: string): void {
  const choice = chooseProxy(settings, new URL(baseUrl));
  if (choice.via === 'invalid') throw new UsageError(unusableProxyMessage(choice));
}

/** The profile's recorded expiry of `apiKey` (the last key list that showed it), when that has passed. */
/** The expiry the profile recorded for this key, when it recorded one for this key. */
function recordedExpiry(profile: Readonly<Profile>, apiKey: string): string | null {
  const recorded = profile.keyExpiry;
  return recorded && recorded.hint === keyHint(apiKey) ? recorded.expiresAt : null;
}

function requestLog(session: Session): ((line: string) => void) | undefined {
  return session.options.verbose ? (line) => session.render.info(line) : undefined;
}

/**
 * The profile's saved server when --base-url or SVC_BASE_URL sends a key
 * being logged in elsewhere, so a 401 can say so. A saved key never goes
 * elsewhere (checkKeyMayGo), and a key from SVC_API_KEY belongs to no profile.
 */
function overriddenBaseUrl(creds: Credentials, endpoint: Endpoint, profile: Readonly<Profile>): string | null {
  if (creds.source !== 'login' || (endpoint.source !== 'flag' && endpoint.source !== 'env')) return null;
  const saved = profile.baseUrl;
  return saved && !sameServer(saved, endpoint.url) ? saved : null;
}
