#!/usr/bin/env node
// CommonJS (bin/package.json), like the bundle it loads, so that no command
// starts Node's ES module loader. Built-ins come from
// process.getBuiltinModule, which loads nothing else.
'use strict';

const { existsSync, readFileSync, writeSync } = process.getBuiltinModule('node:fs');
const { dirname, isAbsolute, join } = process.getBuiltinModule('node:path');

const argv = process.argv.slice(2);

// `svc --version` is what scripts and `npx svc --version` run first: answered
// from package.json with one write(2), without building process.stdout (a
// pipe's stream loads net and the stream machinery). dist/main.js answers the
// same flag when svc runs in-process.
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  const { version } = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'));
  try {
    writeSync(1, `${version}\n`);
    process.exit(0);
  } catch (error) {
    if (error.code === 'EPIPE') process.exit(141);
    // EAGAIN: a non-blocking stdout that is full; the stream below waits for it.
    if (error.code !== 'EAGAIN') throw error;
  }
}

// V8 keeps the compiled code of svc's bundle between runs (bin/load-bundle.js),
// in the user's own cache directory, not Node's default under the shared
// os.tmpdir(), where another local user could plant code.
// NODE_COMPILE_CACHE (a directory) and NODE_DISABLE_COMPILE_CACHE still win.
// The cache is made inside the directory that holds the cache home (the
// home, for ~/.cache), never that directory itself: with a home that does
// not exist (a service account's /nonexistent) svc runs uncached and makes
// nothing (docs/contract.md §C10: nothing is required of HOME).
const bundle = join(__dirname, '..', 'dist', 'main.js');
const cacheHome = isAbsolute(process.env.XDG_CACHE_HOME ?? '') ? process.env.XDG_CACHE_HOME : join(process.getBuiltinModule('node:os').homedir(), '.cache');
const cacheDir = process.env.NODE_COMPILE_CACHE || (existsSync(dirname(cacheHome)) ? join(cacheHome, 'svc', 'compile-cache') : null);

// Ctrl-C (SIGINT), SIGTERM and SIGHUP end svc at once, unless a command of
// svc's own listens for the signal (to shut down cleanly, or to wait for an
// answer that holds a secret: holdsSignal). Under --json the document stdout
// owes is printed first (signalDocument) when nothing was printed there yet,
// written at once: the process ends before an asynchronous write to a pipe
// would be done.
let svc;
let processed;
const STOP_SIGNALS = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };
for (const signal of Object.keys(STOP_SIGNALS)) {
  process.on(signal, () => {
    if (svc?.holdsSignal(signal)) return;
    dieBy(signal, STOP_SIGNALS[signal], processed?.stdoutTouched() ? null : svc?.signalDocument(argv, signal));
  });
}

/**
 * Ends svc by `signal`, not by an exit with 128 + its number: a shell tells
 * the two apart, and goes on with a loop (`for id in …; do svc keys revoke
 * "$id"; done`), a script or make after a child that exited, taking the
 * signal as handled. With no listener left Node gives the signal back its
 * default action, which ends the process as the kill(2) returns; `code` is
 * the exit should the process outlive it (a platform without that signal).
 * `document`: what stdout still owes, written first, after the terminal is
 * given back (it may be stdout).
 */
function dieBy(signal, code, document = null) {
  processed?.restoreTerminal();
  if (document) {
    try {
      writeSync(1, document);
    } catch {
      // stdout gone: the status says it.
    }
  }
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
  process.exit(code);
}

// Loaded only past the --version answer above: parsing the bundle is most of
// what that answer would otherwise cost.
const { argvGrammar, loadBundle, commandKey } = require('./load-bundle.js');
const loaded = process.env.NODE_DISABLE_COMPILE_CACHE
  ? { exports: require(bundle), keepCompiledCode: () => {} }
  : loadBundle(bundle, cacheDir, commandKey(argv, argvGrammar(bundle)));
svc = loaded.exports;
const { keepCompiledCode } = loaded;
const { ExitCode, invoke, processIO, restoreV8Flags } = svc;

(async () => {
  // The reader went away (`svc keys list | head -1`): stop quietly, as a
  // process killed by SIGPIPE would, rather than crash with a stack trace.
  // Node ignores SIGPIPE itself, so the shell's status for it is set by hand.
  // Any other failed write (ENOSPC, EIO) stays on its stream, where svc looks
  // before it counts stdout's data as written (io.stdoutWritten): reported,
  // never thrown. A failed stderr has no one left to tell: the exit code says it.
  processed = processIO((error) => {
    if (error.code === 'EPIPE') process.exit(ExitCode.brokenPipe);
  });
  const { io, flushed } = processed;
  const { exitCode, signal } = await invoke(argv, io);
  process.exitCode = exitCode;
  // Writes to a pipe are asynchronous: exiting now would cut off what the
  // reader has not taken yet (everything past the pipe's 64 KiB buffer).
  await flushed();
  // A signal stopped the command, which has done what it asks: svc ends by it.
  if (signal) dieBy(signal, exitCode);
  // After the output, so that the first run of a command is not slower to
  // answer, only to exit; a failed run may have taken a path of no use later.
  if (process.exitCode === 0) keepCompiledCode(restoreV8Flags);
  // A stop signal that came since the event loop last polled is only queued:
  // its listener (dieBy) runs when the loop next polls, which process.exit
  // would never reach. So that a Ctrl-C in svc's last milliseconds still ends
  // it by the signal and a shell loop around it stops, svc waits for a poll:
  // the first immediate may run in the check phase right after the poll that
  // woke svc, the second only after the next one.
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  process.exit();
})();
