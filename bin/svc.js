#!/usr/bin/env node
// CommonJS (bin/package.json), like the bundle it loads, so that no command
// starts Node's ES module loader. Built-ins come from
// process.getBuiltinModule, which loads nothing else.
'use strict';

const { readFileSync, writeSync } = process.getBuiltinModule('node:fs');
const { isAbsolute, join } = process.getBuiltinModule('node:path');

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
const bundle = join(__dirname, '..', 'dist', 'main.js');
const cacheHome = isAbsolute(process.env.XDG_CACHE_HOME ?? '') ? process.env.XDG_CACHE_HOME : join(process.getBuiltinModule('node:os').homedir(), '.cache');
const cacheDir = process.env.NODE_COMPILE_CACHE || join(cacheHome, 'svc', 'compile-cache');

// Ctrl-C (SIGINT), SIGTERM and SIGHUP end svc at once with 128 + the
// signal's number, unless a command installed its own handler (to shut down
// cleanly, or to wait for an answer that holds a secret). Under --json the
// document stdout owes is printed first (signalDocument) when nothing was
// printed there yet, written at once: the process ends before an
// asynchronous write to a pipe would be done.
let svc;
let stdoutTouched = () => false;
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]]) {
  process.on(signal, () => {
    if (process.listenerCount(signal) !== 1) return;
    const document = stdoutTouched() ? null : svc?.signalDocument(argv, signal);
    if (document) {
      try {
        writeSync(1, document);
      } catch {
        // stdout gone: the exit code says it.
      }
    }
    process.exit(code);
  });
}

// Loaded only past the --version answer above: parsing the bundle is most of
// what that answer would otherwise cost.
const { loadBundle, commandKey } = require('./load-bundle.js');
const loaded = process.env.NODE_DISABLE_COMPILE_CACHE ? { exports: require(bundle), keepCompiledCode: () => {} } : loadBundle(bundle, cacheDir, commandKey(argv));
svc = loaded.exports;
const { keepCompiledCode } = loaded;
const { ExitCode, main, processIO, restoreV8Flags } = svc;

(async () => {
  // The reader went away (`svc keys list | head -1`): stop quietly, as a
  // process killed by SIGPIPE would, rather than crash with a stack trace.
  // Node ignores SIGPIPE itself, so the shell's status for it is set by hand.
  // Any other failed write (ENOSPC, EIO) stays on its stream, where svc looks
  // before it counts stdout's data as written (io.stdoutWritten): reported,
  // never thrown. A failed stderr has no one left to tell: the exit code says it.
  const processed = processIO((error) => {
    if (error.code === 'EPIPE') process.exit(ExitCode.brokenPipe);
  });
  const { io, flushed } = processed;
  stdoutTouched = processed.stdoutTouched;
  process.exitCode = await main(argv, io);
  // Writes to a pipe are asynchronous: exiting now would cut off what the
  // reader has not taken yet (everything past the pipe's 64 KiB buffer).
  await flushed();
  // After the output, so that the first run of a command is not slower to
  // answer, only to exit; a failed run may have taken a path of no use later.
  if (process.exitCode === 0) keepCompiledCode(restoreV8Flags);
  process.exit();
})();
