import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { homeEnv } from './home.js';

/** Environment with nothing inherited that could change svc's behaviour, and this test file's home. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    PATH: process.env.PATH,
    ...homeEnv(),
    SVC_API_KEY: undefined,
    SVC_BASE_URL: undefined,
    SVC_PROFILE: undefined,
    SVC_LOCAL_ADMIN_TOKEN: undefined,
    NO_COLOR: undefined,
    CI: undefined,
    ...extra,
  };
}

/** A temporary SVC_CONFIG_DIR per test file. */
export function tempConfigDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-e2e-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A reference server, however started, and a config dir for one test file.
 * `env` points svc at both, with the server's bootstrap key.
 */
export function useServer<S extends { url: string; apiKey: string | null; stop(): Promise<void> }>(start: () => Promise<S>) {
  const config = tempConfigDir();
  let running: S | undefined;
  beforeAll(async () => {
    running = await start();
  });
  afterAll(async () => {
    await running?.stop();
    config.remove();
  });
  return {
    configDir: config.dir,
    get server(): S {
      if (!running) throw new Error('the local server is started in beforeAll');
      return running;
    },
    get env(): Record<string, string> {
      return { SVC_CONFIG_DIR: config.dir, SVC_BASE_URL: this.server.url, SVC_API_KEY: this.server.apiKey! };
    },
  };
}
