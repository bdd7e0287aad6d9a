// A child given an environment of its own must be given a HOME too
// (cleanEnv and homeEnv give this file's): without one, node and the shells
// look the user's real home up in the password database, and svc's config
// and cache would land there.
import childProcess, { ChildProcess } from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';

function refuseWithoutHome(how: string, hasHome: boolean): void {
  if (!hasHome) throw new Error(`${how}: an environment without HOME; give the child cleanEnv() or homeEnv() (test/helpers).`);
}

// spawn, exec, execFile and fork, execa's calls and promisify's included, all start through this
// method, undocumented, which gets the environment as it will be: `KEY=value` pairs.
const child = ChildProcess.prototype as unknown as { spawn(options: { envPairs: string[] }): unknown };
const spawn = child.spawn;
child.spawn = function (options) {
  refuseWithoutHome('a child process', options.envPairs.some((pair) => pair.startsWith('HOME=')));
  return spawn.call(this, options);
};

for (const name of ['spawnSync', 'execSync', 'execFileSync'] as const) {
  const start = childProcess[name] as (...args: unknown[]) => unknown;
  Object.assign(childProcess, {
    [name]: (...args: unknown[]) => {
      const options = args.find((arg): arg is { env?: NodeJS.ProcessEnv } => typeof arg === 'object' && arg !== null && !Array.isArray(arg));
      refuseWithoutHome(`child_process.${name}`, (options?.env ?? process.env).HOME !== undefined);
      return start(...args);
    },
  });
}
syncBuiltinESMExports();
