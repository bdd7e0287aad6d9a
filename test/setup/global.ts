// Before any worker starts, HOME and the XDG directories of the whole run
// point at a fresh directory, so even a child process that a test started
// with the inherited environment writes there, not in the user's home.
// What svc keeps under the real home is fingerprinted before the run and
// compared after it: the run fails if anything there changed.
import { createHash } from 'node:crypto';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { homeVars } from '../helpers/home.js';

/** Set once the run's home is in place: every project runs the root's globalSetup again, and only the first may. */
const RUN_HOME = 'SVC_TEST_RUN_HOME';

export default function setup(): (() => void) | undefined {
  if (process.env[RUN_HOME]) return undefined;
  const watched = svcPaths(process.env);
  const before = fingerprint(watched);
  const runHome = mkdtempSync(join(tmpdir(), 'svc-test-run-'));
  Object.assign(process.env, homeVars(runHome), { [RUN_HOME]: runHome });
  // `npm test` hands the tests npm's cache and user config in the real home, and a user may have set
  // Node's compile cache: without them, the npm, npx and node the tests run go by the HOME above.
  for (const name of ['npm_config_cache', 'npm_config_userconfig', 'NODE_COMPILE_CACHE']) delete process.env[name];
  return () => {
    rmSync(runHome, { recursive: true, force: true });
    const changes = compare(before, fingerprint(watched));
    if (changes.length === 0) return;
    // vitest prints an error thrown here but exits 0 for it.
    process.exitCode = 1;
    console.error(
      `\nFAIL: what svc keeps in the real home changed during the run (svc or another checkout's tests running meanwhile would do it too):\n  ${changes.join('\n  ')}\n`,
    );
  };
}

/** Where svc writes under the user's home: its config (src/cli/config/store.ts) and its compile cache (bin/svc.js). */
function svcPaths(env: NodeJS.ProcessEnv): string[] {
  const home = env.HOME || homedir();
  const cacheHome = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : join(home, '.cache');
  const paths = [
    join(home, '.config', 'svc'),
    join(env.XDG_CONFIG_HOME || join(home, '.config'), 'svc'),
    env.SVC_CONFIG_DIR,
    join(home, '.cache', 'svc'),
    join(cacheHome, 'svc'),
    env.NODE_COMPILE_CACHE,
  ];
  return [...new Set(paths.filter((path): path is string => Boolean(path)))];
}

/** Every file, directory and link under `roots`: kind, content, owner, mode and modification time. */
function fingerprint(roots: string[]): Map<string, string> {
  const prints = new Map<string, string>();
  const visit = (path: string): void => {
    try {
      const stats = lstatSync(path);
      const what = stats.isFile()
        ? `file sha256:${createHash('sha256').update(readFileSync(path)).digest('hex')}`
        : stats.isSymbolicLink()
          ? `link to ${readlinkSync(path)}`
          : stats.isDirectory()
            ? 'directory'
            : 'special file';
      prints.set(path, `${what}, uid ${stats.uid}, mode ${(stats.mode & 0o7777).toString(8)}, modified ${stats.mtimeMs}`);
      if (stats.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') prints.set(path, `unreadable (${code})`);
    }
  };
  for (const root of roots) visit(root);
  return prints;
}

function compare(before: Map<string, string>, after: Map<string, string>): string[] {
  const changes: string[] = [];
  for (const [path, print] of before) {
    const now = after.get(path);
    if (now === undefined) changes.push(`removed ${path}`);
    else if (now !== print) changes.push(`changed ${path}: was ${print}, is ${now}`);
  }
  for (const path of after.keys()) if (!before.has(path)) changes.push(`created ${path}`);
  return changes;
}
