#!/usr/bin/env node
// V8 keeps the compiled code of svc's lazily loaded chunks between runs
// (Node >= 22.1). Kept in the user's own cache directory, not Node's default
// under the shared os.tmpdir(), where another local user could plant code;
// NODE_COMPILE_CACHE and NODE_DISABLE_COMPILE_CACHE still win. Built-ins come
// from process.getBuiltinModule: an import of node:module would cost more
// than the cache saves on a short command.
const { enableCompileCache } = process.getBuiltinModule('node:module');
if (enableCompileCache) {
  const { isAbsolute, join } = process.getBuiltinModule('node:path');
  const cacheHome = isAbsolute(process.env.XDG_CACHE_HOME ?? '') ? process.env.XDG_CACHE_HOME : join(process.getBuiltinModule('node:os').homedir(), '.cache');
  enableCompileCache(process.env.NODE_COMPILE_CACHE || join(cacheHome, 'svc', 'compile-cache'));
}
import { ExitCode, main, processIO } from '../dist/main.js';

// Ctrl-C exits 130 at once, unless a command (svc serve) installed its own
// handler to shut down cleanly.
process.on('SIGINT', () => {
  if (process.listenerCount('SIGINT') === 1) process.exit(130);
});

// The reader went away (`svc keys list | head -1`): stop quietly, as a
// process killed by SIGPIPE would, rather than crash with a stack trace.
// Node ignores SIGPIPE itself, so the shell's status for it is set by hand.
const { io, flushed } = processIO((error) => {
  if (error.code === 'EPIPE') process.exit(ExitCode.brokenPipe);
  throw error;
});

process.exitCode = await main(process.argv.slice(2), io);

// Writes to a pipe are asynchronous: exiting now would cut off what the
// reader has not taken yet (everything past the pipe's 64 KiB buffer).
await flushed();
process.exit();
