// tier: in-process
/**
 * A profile kept in the OS keyring (issue 26), where no keyring process is
 * needed to show it: the wait for a keyring that does not answer is bounded
 * and reported (exit 3), decided by the scheduled bound firing rather than
 * by the clock; a config file that holds a key in both places is refused;
 * and a command that only reads the profile never opens the keyring.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { svc, tempConfigDir, useLocalServer } from '../helpers/in-process.js';

const local = useLocalServer({ plan: 'pro' });
let config: ReturnType<typeof tempConfigDir>;
let dir: string;
beforeEach(() => {
  config = tempConfigDir();
  dir = mkdtempSync(join(tmpdir(), 'svc-bus-'));
});
afterEach(() => {
  config.remove();
  rmSync(dir, { recursive: true, force: true });
});

const file = () => join(config.dir, 'config.json');
const keyringProfile = { keyring: { service: 'svc', account: 'default@elsewhere', hint: 'sk_abcd…wxyz' } };
const env = (bus: string) => ({ SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: local.server.url, DBUS_SESSION_BUS_ADDRESS: bus });

/** A unix socket that accepts a connection and never says a word, as a stuck bus or keyring would. */
async function silentBus(): Promise<{ address: string; connected: Promise<void>; server: Server; sockets: Socket[] }> {
  const path = join(dir, 'bus');
  const sockets: Socket[] = [];
  let connected!: () => void;
  const seen = new Promise<void>((resolve) => (connected = resolve));
  const server = createServer((socket) => {
    sockets.push(socket);
    connected();
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return { address: `unix:path=${path}`, connected: seen, server, sockets };
}

describe('the bound on a keyring that does not answer', () => {
  it('is reported as exit 3 once it passes, with what svc waited for; the file is not looked at', async () => {
    writeFileSync(file(), JSON.stringify({ profiles: { default: keyringProfile } }), { mode: 0o600 });
    const bus = await silentBus();
    const bounds: number[] = [];
    try {
      const result = await svc(['keys', 'list'], env(bus.address), {
        deps: {
          // The bound passes once svc is connected and waiting: an event decides it, not the clock.
          schedule: (ms, run) => {
            bounds.push(ms);
            void bus.connected.then(run);
            return () => {};
          },
        },
      });
      expect(result.exitCode).toBe(3);
      expect(result.stderr).toBe(
        [
          "error: Profile 'default' keeps its key in the OS keyring (service 'svc', account 'default@elsewhere'); svc does not look for it anywhere else.",
          'The D-Bus session bus did not answer within 3 s: the keyring may be locked and waiting for its password in a prompt, or its service is stuck.',
          'Unlock the keyring (log in to the desktop session, or open your keyring manager), then run the command again. SVC_API_KEY still works meanwhile.',
        ].join('\n'),
      );
      expect(bounds).toEqual([3000]);
      // svc hung up on the bus it gave up on.
      await Promise.all(bus.sockets.map((socket) => (socket.closed ? undefined : new Promise((resolve) => socket.once('close', resolve)))));
    } finally {
      for (const socket of bus.sockets) socket.destroy();
      await new Promise((resolve) => bus.server.close(resolve));
    }
  });

  it('is not waited on by commands that only read the profile: profile list and logout of another profile open no keyring', async () => {
    writeFileSync(file(), JSON.stringify({ profiles: { default: keyringProfile, work: { apiKey: local.server.apiKey } } }), { mode: 0o600 });
    const bus = await silentBus();
    try {
      const noBound = { deps: { schedule: () => () => expect.fail('no keyring wait was expected') } };
      const list = await svc(['profile', 'list', '--json'], env(bus.address), noBound);
      expect(list.exitCode, list.stderr).toBe(0);
      expect(JSON.parse(list.stdout).profiles[0]).toMatchObject({ name: 'default', key: { hint: 'sk_abcd…wxyz', store: 'keyring' } });
      const logout = await svc(['logout', '--profile', 'work'], env(bus.address), noBound);
      expect(logout.exitCode, logout.stderr).toBe(0);
      expect(bus.sockets).toEqual([]);
    } finally {
      await new Promise((resolve) => bus.server.close(resolve));
    }
  });
});

describe('the config file', () => {
  it('refuses a profile with a key in both places rather than guess which one counts', async () => {
    writeFileSync(file(), JSON.stringify({ profiles: { default: { ...keyringProfile, apiKey: local.server.apiKey } } }), { mode: 0o600 });
    const result = await svc(['keys', 'list'], env('unix:path=/nonexistent'));
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('profile "default" has both "apiKey" and "keyring", where svc expects the key in one place');
  });
});
