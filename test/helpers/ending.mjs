// Runs a command on the terminal it is given and writes how the command
// ended to the file named first: {"exitCode", "signal", "lineMode"}. A
// shell's $? shows an exit with 130 and a death by SIGINT alike; the shells
// around svc do not (test/helpers/terminal.ts, `ending`). `lineMode`: the
// terminal is back in line mode (icanon, echo) once the command is gone, as
// a shell's prompt needs it. The command's pid goes to `<file>.pid` as it starts.
import { execFileSync, spawn } from 'node:child_process';
import { renameSync, writeFileSync } from 'node:fs';

const [file, command, ...args] = process.argv.slice(2);
/** Written whole or not at all: the test reads the file as soon as it is there. */
const put = (path, text) => {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
};
// The terminal's Ctrl-C (and SIGHUP, SIGTERM sent to the group) reach this process too: it stays to tell the end.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => {});
const child = spawn(command, args, { stdio: 'inherit' });
put(`${file}.pid`, String(child.pid));
child.on('exit', (exitCode, signal) => {
  const modes = execFileSync('stty', ['-a'], { stdio: ['inherit', 'pipe', 'ignore'], encoding: 'utf8' });
  const lineMode = /(^|\s)icanon(\s|$)/.test(modes) && /(^|\s)echo(\s|$)/.test(modes);
  put(file, JSON.stringify({ exitCode, signal, lineMode }));
  process.exit(0);
});
