/**
 * What one command's test needs, in a line, as gh's httpmock.Registry and
 * iostreams.Test() give a Go test: `const local = useCommandTest({ plan:
 * 'pro' })` starts a reference server and a config dir for the test file
 * (useLocalServer); `local.run(...)` runs svc piped, `local.onTerminal(...)`
 * on a terminal with scripted answers, and `local.create(name)` makes a key
 * to act on. The results are in-process.ts's, so assertions read as before.
 */
import type { Plan } from '../../src/contract/plans.js';
import type { ServerOptions } from '../../src/server/listen.js';
import { svc, useLocalServer, type RunOptions } from './in-process.js';
import { scriptedPrompter, type Step } from './prompter.js';

export function useCommandTest(options: { plan?: Plan } & Partial<ServerOptions> = {}) {
  const local = useLocalServer(options);
  return {
    configDir: local.configDir,
    get server() {
      return local.server;
    },
    get env() {
      return local.env;
    },
    /** svc piped, as a script runs it, against this file's server. */
    run: (...args: string[]) => svc(args, local.env),
    /**
     * svc on a 120-column terminal, answering its questions from `script`;
     * `asked` is every question it put, with its choices.
     */
    async onTerminal(args: string[], script: Step[] = [], { env = local.env, ...options }: RunOptions & { env?: Record<string, string | undefined> } = {}) {
      const prompter = scriptedPrompter(script);
      const result = await svc(args, env, { tty: true, columns: 120, ...options, deps: { prompter, ...options.deps } });
      return { ...result, asked: prompter.asked };
    },
    /** A new key on this file's server, made the way a user would: its id and secret. */
    async create(name: string) {
      return JSON.parse((await svc(['keys', 'create', name, '--json'], local.env)).stdout).key as { id: string; secret: string };
    },
  };
}
