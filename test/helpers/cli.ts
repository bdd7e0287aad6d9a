/**
 * The built svc as users run it: a child process with no TTY, against the
 * built reference server, also a child process (reference-server.mjs).
 */
import { execa } from 'execa';
import { cleanEnv, useServer } from './env.js';
import { serveProcess, SVC_BIN, type ServeProcess } from './reference-server.mjs';

export { call, SVC_BIN, windowEndsIn } from './reference-server.mjs';
export { cleanEnv, tempConfigDir } from './env.js';

export type LocalServer = ServeProcess;

/** A real `svc serve --local` on a free port, as users run it. */
export function startLocalServer(args: string[] = []): Promise<LocalServer> {
  return serveProcess(args, { env: cleanEnv() });
}

/** A child `svc serve --local` and a config dir for one test file (env.ts's useServer). */
export function useLocalServer(args: string[] = []) {
  return useServer(() => startLocalServer(args));
}

/** Runs the built svc with no TTY, and no stdin unless `input` is given, in `cwd` when given. */
export function svc(args: string[], env: Record<string, string | undefined>, options: { input?: string; cwd?: string } = {}) {
  const stdin = options.input === undefined ? { stdin: 'ignore' as const } : { input: options.input };
  return execa('node', [SVC_BIN, ...args], {
    cwd: options.cwd,
    env: cleanEnv(env),
    extendEnv: false,
    reject: false,
    timeout: 30_000,
    ...stdin,
  });
}

