import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Environment with nothing inherited that could change svc's behaviour. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    SVC_API_KEY: undefined,
    SVC_BASE_URL: undefined,
    SVC_PROFILE: undefined,
    SVC_CONFIG_DIR: undefined,
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
