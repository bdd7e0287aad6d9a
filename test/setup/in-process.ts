// A file declared `// tier: in-process` starts no child process: every way
// node:child_process has to start one throws here, execa's included (it
// calls the module's spawn, which syncBuiltinESMExports makes this one).
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';

const STARTERS = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;

for (const name of STARTERS) {
  Object.assign(childProcess, {
    [name]: () => {
      throw new Error(
        `child_process.${name}: this file declares "// tier: in-process", so it may start no child process. ` +
          'Run svc and its server in-process (test/helpers/in-process.ts), or declare the file "// tier: process".',
      );
    },
  });
}
syncBuiltinESMExports();
