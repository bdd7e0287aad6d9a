/**
 * The built svc as users run it: a child process with no TTY, against the
 * built reference server, also a child process (reference-server.mjs).
 */
import { execa } from 'execa';
import { afterAll, beforeAll } from 'vitest';
import { cleanEnv, tempConfigDir } from './env.js';
import { serveProcess, SVC_BIN, type ServeProcess } from './reference-server.mjs';

export { call, SVC_BIN, windowEndsIn } from './reference-server.mjs';
export { cleanEnv, tempConfigDir } from './env.js';

export type LocalServer = ServeProcess;

/** A real `svc serve --local` on a free port, as users run it. */
export function startLocalServer(args: string[] = []): Promise<LocalServer> {
  return serveProcess(args, { env: cleanEnv() });
}

/**
 * A reference server and a config dir for one test file. `env` points svc at
 * both, with the server's bootstrap key.
 */
export function useLocalServer(args: string[] = []) {
  const config = tempConfigDir();
  let running: LocalServer | undefined;
  beforeAll(async () => {
    running = await startLocalServer(args);
  });
  afterAll(async () => {
    await running?.stop();
    config.remove();
  });
  return {
    configDir: config.dir,
    get server(): LocalServer {
      if (!running) throw new Error('the local server is started in beforeAll');
      return running;
    },
    get env(): Record<string, string> {
      return { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: this.server.url, SVC_API_KEY: this.server.apiKey! };
    },
  };
}

/** Runs the built svc with no TTY, and no stdin unless `input` is given. */
export function svc(args: string[], env: Record<string, string | undefined>, options: { input?: string } = {}) {
  const stdin = options.input === undefined ? { stdin: 'ignore' as const } : { input: options.input };
  return execa('node', [SVC_BIN, ...args], {
    env: cleanEnv(env),
    extendEnv: false,
    reject: false,
    timeout: 30_000,
    ...stdin,
  });
}

