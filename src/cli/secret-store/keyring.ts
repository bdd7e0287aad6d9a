/**
 * The OS keyring (Secret Service on Linux, Keychain on macOS, Credential
 * Manager on Windows) through @napi-rs/keyring, installed beside svc by
 * whoever wants keyring profiles and loaded here, on first use, by a
 * profile that keeps its key there: a command that reads a key from the
 * environment or the config file never loads it. svc does not declare it
 * (not even as an optional dependency): npm would resolve its twelve
 * platform packages on every cold `npx svc-cli`, most of that run's time
 * (bench/RESULTS.md, "npx, cold"). Every call is bounded (KEYRING_WAIT_MS): a keyring that waits
 * for an unlock prompt nobody answers is reported, not waited on.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import type { Deps } from '../terminal/deps.js';
import { readEnv } from '../terminal/environment.js';
import { CliError, ExitCode, STOPPING_SIGNALS } from '../errors/errors.js';
import { shellWord } from '../text/text.js';

/** Where a key is kept in the keyring. */
export interface KeyringEntry {
  service: string;
  account: string;
}

export interface Keyring {
  /** The secret, or null when the keyring has no such entry. */
  get(entry: KeyringEntry): Promise<string | null>;
  set(entry: KeyringEntry, secret: string): Promise<void>;
  /** False when there was no such entry. */
  delete(entry: KeyringEntry): Promise<boolean>;
}

/** How long svc waits for the keyring, each time it asks. */
export const KEYRING_WAIT_MS = 3_000;

/** The keyring could not be used: what and why, and what fixes it. Exit 3, as for any key svc cannot use. */
export class KeyringError extends CliError {
  constructor(
    readonly problem: string,
    readonly fix: string,
    context: readonly string[] = [],
  ) {
    super([...context, `${problem}.`, fix], ExitCode.unauthenticated);
    this.name = 'KeyringError';
  }

  /** The same failure, after a line that says what svc was doing. */
  about(...context: string[]): KeyringError {
    return new KeyringError(this.problem, this.fix, context);
  }
}

const ENV_STILL_WORKS = 'SVC_API_KEY still works meanwhile.';

/**
 * The keyring, once it is known to be there: the library loaded and, on
 * Linux, a session bus that answers (session-bus.ts). Every entry is pinned
 * to the Secret Service: by default the library falls back to the kernel's
 * keyutils keyring whenever the Secret Service does not answer, and that
 * keyring is gone at logout or reboot, while the profile would still point
 * at it. Throws KeyringError.
 */
export async function openKeyring(env: NodeJS.ProcessEnv, schedule: Deps['schedule']): Promise<Keyring> {
  const bounded = <T>(what: string, work: (signal: AbortSignal) => Promise<T>) => withinBound(what, work, schedule);
  const { AsyncEntry } = await loadLibrary();
  if (process.platform === 'linux') {
    // Loaded here: it brings node:net, which logging out of a file profile has no use for.
    const { checkSessionBus, NoSessionBus } = await import('./session-bus.js');
    await bounded('the D-Bus session bus', (signal) => checkSessionBus(readEnv(env, 'DBUS_SESSION_BUS_ADDRESS'), signal)).catch((error: unknown) => {
      if (!(error instanceof NoSessionBus)) throw error;
      throw new KeyringError(
        `The OS keyring cannot be reached: ${error.problem}`,
        `Run svc in your desktop session, or start a session bus with a Secret Service in it (\`dbus-run-session -- $SHELL\`, then \`gnome-keyring-daemon --unlock\`). ${ENV_STILL_WORKS}`,
      );
    });
  }
  const open = (entry: KeyringEntry) => {
    try {
      return withDefaultSignals(() => new AsyncEntry(entry.service, entry.account, SECRET_SERVICE_ONLY));
    } catch (error) {
      throw refused(error);
    }
  };
  const call = <T>(what: string, work: (signal: AbortSignal) => Promise<T>) =>
    bounded(what, work).catch((error: unknown) => {
      throw error instanceof KeyringError ? error : refused(error);
    });
  return {
    get: (entry) => call('the keyring', (signal) => open(entry).getPassword(signal)).then((secret) => secret ?? null),
    set: (entry, secret) => call('the keyring', (signal) => open(entry).setPassword(secret, signal)),
    delete: (entry) => call('the keyring', (signal) => open(entry).deleteCredential(signal)),
  };
}

type Library = typeof import('@napi-rs/keyring');

/** The binding as a person installs it: the major version svc is built and tested against (package.json, devDependencies). */
export const KEYRING_PACKAGE = '@napi-rs/keyring@2';

/** Linux: the Secret Service or nothing (the option is ignored elsewhere). */
const SECRET_SERVICE_ONLY = { linux: { store: 'secret-service' } } as const;

/**
 * The bundle is CommonJS and, on Node 20, compiled by vm.Script, where
 * import() has no loader: there it is required. Run from the sources (the
 * in-process tests), it is imported.
 */
async function loadLibrary(): Promise<Library> {
  try {
    return typeof require === 'function' ? (require('@napi-rs/keyring') as Library) : await import('@napi-rs/keyring');
  } catch (error) {
    throw new KeyringError(
      `Keyring support is not installed: svc could not load @napi-rs/keyring (${firstLine(error)})`,
      `Keyring support is installed beside svc, on a platform @napi-rs/keyring has a build for: ${keyringInstallAdvice(svcPackageDir())}. ${ENV_STILL_WORKS}`,
    );
  }
}

/** svc's own package directory (its package.json above the running code: dist/ installed, src/ in a clone), or null. */
function svcPackageDir(): string | null {
  for (let dir = __dirname; dirname(dir) !== dir; dir = dirname(dir)) {
    try {
      if ((JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name === 'svc-cli') return dir;
    } catch {
      // No package.json here, or not svc's: look further up.
    }
  }
  return null;
}

/**
 * The command that puts the keyring's binding where this svc loads it
 * from, for how this svc was installed (`packageDir`, its own directory).
 * svc is in no registry, so the advice never names a package of its own
 * there (someone else could publish one by that name): it installs
 * @napi-rs/keyring alone, beside the svc that is already there: in the
 * same global prefix, the same project, or (npx) beside the tarball again.
 */
export function keyringInstallAdvice(packageDir: string | null, exists: (path: string) => boolean = existsSync): string {
  const tarball = `./svc-cli-${SVC_VERSION}.tgz`;
  if (packageDir === null) return `install ${KEYRING_PACKAGE} where Node finds it from svc's own directory`;
  const modules = dirname(packageDir);
  if (basename(modules) !== 'node_modules') {
    // A clone installs it with its other development dependencies; a package unpacked anywhere else, beside itself.
    return exists(join(packageDir, 'package-lock.json'))
      ? `svc runs from its clone ${packageDir}, where \`npm ci --prefix ${shellWord(packageDir)}\` installs it with the other development dependencies`
      : `svc runs from ${packageDir}: \`npm install --prefix ${shellWord(packageDir)} --no-save ${KEYRING_PACKAGE}\``;
  }
  const root = dirname(modules);
  if (packageDir.split(sep).includes('_npx')) {
    return `this svc runs through npx, so name both there: \`npx -p ${tarball} -p ${KEYRING_PACKAGE} svc …\` (the svc tarball you ran)`;
  }
  // npm's global layout: {prefix}/lib/node_modules with {prefix}/bin/svc, or on Windows {prefix}/node_modules with {prefix}/svc.cmd.
  const prefix = basename(root) === 'lib' && exists(join(dirname(root), 'bin', 'svc')) ? dirname(root) : exists(join(root, 'svc.cmd')) ? root : null;
  if (prefix !== null) return `svc is installed globally in ${prefix}: \`npm install -g --prefix ${shellWord(prefix)} ${KEYRING_PACKAGE}\``;
  return `svc is installed in the project ${root}: \`npm install --prefix ${shellWord(root)} ${KEYRING_PACKAGE}\``;
}

/**
 * `work`, a synchronous call that can hold the event loop, with SIGINT,
 * SIGTERM and SIGHUP given back their default action while it runs. The
 * binding's constructor is one: on Linux it asks the Secret Service over
 * D-Bus before it returns, and waits up to 2 s for one that does not
 * answer (a hung gnome-keyring). A listener runs on the event loop only,
 * so a signal then would end svc once the call is over; with the default
 * action it ends svc at once, by the signal (nothing is printed, and
 * nothing was written: the entry is not made yet).
 */
function withDefaultSignals<T>(work: () => T): T {
  const listening = STOPPING_SIGNALS.map((signal) => ({ signal, listeners: process.rawListeners(signal) as ((signal: NodeJS.Signals) => void)[] }));
  for (const { signal } of listening) process.removeAllListeners(signal);
  try {
    return work();
  } finally {
    for (const { signal, listeners } of listening) for (const listener of listeners) process.on(signal, listener);
  }
}

/** `work`, given up on after KEYRING_WAIT_MS (its signal aborted): a keyring that waits for an unlock prompt is reported, not waited on. */
function withinBound<T>(what: string, work: (signal: AbortSignal) => Promise<T>, schedule: Deps['schedule']): Promise<T> {
  const controller = new AbortController();
  const slow = new KeyringError(
    `${what[0]!.toUpperCase()}${what.slice(1)} did not answer within ${KEYRING_WAIT_MS / 1000} s: the keyring may be locked and waiting for its password in a prompt, or its service is stuck`,
    `Unlock the keyring (log in to the desktop session, or open your keyring manager), then run the command again. ${ENV_STILL_WORKS}`,
  );
  return new Promise<T>((resolve, reject) => {
    const cancel = schedule(KEYRING_WAIT_MS, () => {
      reject(slow);
      controller.abort(slow);
    });
    // The library's entry is made synchronously and may throw: that failure is reported like any other, and ends the wait.
    new Promise<T>((settle) => settle(work(controller.signal))).then(
      (value) => {
        cancel();
        resolve(value);
      },
      (error: unknown) => {
        cancel();
        reject(error);
      },
    );
  });
}

/** The library's failure, sorted into what a person can act on. */
function refused(error: unknown): KeyringError {
  const message = firstLine(error);
  if (/did not receive a reply|timeout|timed out/i.test(message)) {
    // The library gives up on a Secret Service that does not answer (after 2 s, inside svc's bound); pinned to it, it does not fall back.
    return new KeyringError(
      `The keyring did not answer within ${KEYRING_WAIT_MS / 1000} s: its service (the Secret Service on Linux) is stuck, or waiting for its password in a prompt`,
      `Unlock the keyring or restart its service (on Linux, gnome-keyring-daemon or KeePassXC), then run the command again. ${ENV_STILL_WORKS}`,
    );
  }
  if (/\blocked\b|unlock prompt was dismissed|prompt dismissed/i.test(message)) {
    return new KeyringError(
      `The OS keyring is locked (${message})`,
      `Unlock it (log in to the desktop session, or \`gnome-keyring-daemon --unlock\`), then run the command again. ${ENV_STILL_WORKS}`,
    );
  }
  if (/no result found/i.test(message)) {
    return new KeyringError(
      `The OS keyring is locked, or has no default collection to keep keys in (${message})`,
      `Unlock it, or create its default keyring: log in to the desktop session, or open your keyring manager (Seahorse, KeePassXC); on a bare session, \`echo -n PASSWORD | gnome-keyring-daemon --replace --unlock --components=secrets\` unlocks (or creates) it. Then run the command again. ${ENV_STILL_WORKS}`,
    );
  }
  if (/org\.freedesktop\.secrets|ServiceUnknown|not activatable/i.test(message)) {
    // A bus with no Secret Service on it, nor one it can start: the library, pinned to it, says so.
    return new KeyringError(
      `The OS keyring cannot be reached: no Secret Service on the D-Bus session bus (${message})`,
      `Start a Secret Service (gnome-keyring-daemon, or KeePassXC with its Secret Service integration) and unlock it. ${ENV_STILL_WORKS}`,
    );
  }
  return new KeyringError(`The OS keyring refused: ${message}`, `Check that the keyring works (\`secret-tool\`, Keychain Access or Credential Manager). ${ENV_STILL_WORKS}`);
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 200);
}

/** The command that removes an entry by hand, on this platform. */
export function removeByHand(entry: KeyringEntry): string {
  const { service, account } = entry;
  if (process.platform === 'darwin') return `security delete-generic-password -s ${shellWord(service)} -a ${shellWord(account)}`;
  if (process.platform === 'win32') return `cmdkey /delete:${account}.${service}`;
  return `secret-tool clear service ${shellWord(service)} username ${shellWord(account)}`;
}
