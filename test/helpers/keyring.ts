/**
 * A private OS keyring for a process-tier test: a D-Bus session bus of its
 * own (dbus-daemon, with no service activation, so nothing starts behind
 * the test's back) and, unless asked not to, gnome-keyring's Secret
 * Service on it, its keyrings in a directory of its own and unlocked with a
 * password of its own. Never the user's keyring or session bus: svc's
 * children get this bus's address in DBUS_SESSION_BUS_ADDRESS.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { execa } from 'execa';
import { homeEnv } from './home.js';

export interface PrivateKeyring {
  /** DBUS_SESSION_BUS_ADDRESS of the private bus. */
  address: string;
  /** Locks the login collection through the Secret Service API, as a screen lock would. */
  lock(): Promise<void>;
  /** Stops the Secret Service's process (SIGSTOP) while the bus goes on answering: a keyring daemon that hangs. */
  hang(): void;
  /** Lets it run again (SIGCONT). */
  resume(): void;
  /**
   * Watches the bus (dbus-monitor) from when it resolves: `called` resolves
   * at the first method call sent to the Secret Service, from anyone, which
   * a hung one leaves unanswered. `stop` ends the watch.
   */
  watchCalls(): Promise<{ called: Promise<void>; stop(): void }>;
  /** The secret under svc's service and `account`, as secret-tool reads it; null when there is none. */
  lookup(account: string): Promise<string | null>;
  stop(): Promise<void>;
}

/** `unlocked: false`: gnome-keyring as a session starts it without a password, with no login keyring yet (nothing unlocked, no default collection). */
export async function startPrivateKeyring(options: { secretService?: boolean; unlocked?: boolean } = {}): Promise<PrivateKeyring> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-keyring-'));
  const config = join(dir, 'bus.conf');
  writeFileSync(
    config,
    `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=${dir}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`,
  );
  const children: ChildProcess[] = [];
  let secrets: ChildProcess | undefined;
  const stop = async () => {
    await Promise.all(
      children.reverse().map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill();
            child.kill('SIGCONT');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  const bus = spawn('dbus-daemon', [`--config-file=${config}`, '--nofork', '--print-address=1'], { stdio: ['ignore', 'pipe', 'ignore'] });
  children.push(bus);
  let address: string;
  let env: Record<string, string | undefined>;
  // A keyring that does not come up (gnome-keyring missing, a bus that hangs) leaves no daemon behind.
  try {
    address = await firstLine(bus);
    env = { ...homeEnv(), PATH: process.env.PATH, DBUS_SESSION_BUS_ADDRESS: address, XDG_RUNTIME_DIR: dir, XDG_DATA_HOME: join(dir, 'data') };
    if (options.secretService !== false) {
      const unlock = options.unlocked === false ? [] : ['--unlock'];
      const daemon = spawn('gnome-keyring-daemon', ['--foreground', ...unlock, '--components=secrets'], { env, stdio: ['pipe', 'ignore', 'ignore'] });
      children.push(daemon);
      secrets = daemon;
      daemon.stdin!.on('error', () => {});
      daemon.stdin!.end('test-keyring-password');
      await untilOwned(address);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const dbusSend = (args: string[]) => execa('dbus-send', ['--session', '--print-reply', ...args], { env, extendEnv: false });
  return {
    address,
    async lock() {
      await dbusSend(['--dest=org.freedesktop.secrets', '/org/freedesktop/secrets', 'org.freedesktop.Secret.Service.Lock', 'array:objpath:/org/freedesktop/secrets/collection/login']);
    },
    hang() {
      secrets!.kill('SIGSTOP');
    },
    resume() {
      secrets?.kill('SIGCONT');
    },
    async watchCalls() {
      const monitor = spawn('dbus-monitor', ['--address', address, "type='method_call',destination='org.freedesktop.secrets'"], { env, stdio: ['ignore', 'pipe', 'ignore'] });
      // Its first lines are the bus's signals to the monitor itself: it is watching.
      await firstLine(monitor, 'dbus-monitor');
      let seen = '';
      const called = new Promise<void>((resolve) =>
        monitor.stdout!.on('data', (chunk: string) => {
          seen += chunk;
          if (seen.includes('method call')) resolve();
        }),
      );
      return { called, stop: () => monitor.kill() };
    },
    async lookup(account) {
      const result = await execa('secret-tool', ['lookup', 'service', 'svc', 'username', account], { env, extendEnv: false, reject: false });
      return result.exitCode === 0 && result.stdout !== '' ? result.stdout : null;
    },
    stop,
  };

  /** The Secret Service owns its name on the bus: gnome-keyring is ready for svc. */
  async function untilOwned(busAddress: string): Promise<void> {
    for (let attempt = 0; attempt < 200; attempt++) {
      const { stdout } = await execa(
        'dbus-send',
        ['--session', '--print-reply', '--dest=org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus.NameHasOwner', 'string:org.freedesktop.secrets'],
        { env: { ...homeEnv(), PATH: process.env.PATH, DBUS_SESSION_BUS_ADDRESS: busAddress }, extendEnv: false },
      );
      if (stdout.includes('boolean true')) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error('gnome-keyring-daemon did not take org.freedesktop.secrets on the private bus');
  }
}

function firstLine(child: ChildProcess, name = 'dbus-daemon'): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      text += chunk;
      const end = text.indexOf('\n');
      if (end >= 0) resolve(text.slice(0, end));
    });
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}) before printing a line`)));
  });
}

/** A private keyring for the tests of the describe block that calls this: started before them, stopped after. */
export function usePrivateKeyring(): () => PrivateKeyring {
  let keyring: PrivateKeyring | undefined;
  beforeAll(async () => {
    keyring = await startPrivateKeyring();
  }, 30_000);
  afterAll(() => keyring?.stop());
  return () => keyring!;
}
