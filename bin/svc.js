#!/usr/bin/env node
import module from 'node:module';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
// V8 keeps the compiled code of svc's lazily loaded chunks between runs
// (Node >= 22.1). Kept in the user's own cache directory, not Node's default
// under the shared os.tmpdir(), where another local user could plant code;
// NODE_COMPILE_CACHE and NODE_DISABLE_COMPILE_CACHE still win.
const cacheHome = isAbsolute(process.env.XDG_CACHE_HOME ?? '') ? process.env.XDG_CACHE_HOME : join(homedir(), '.cache');
module.enableCompileCache?.(process.env.NODE_COMPILE_CACHE || join(cacheHome, 'svc', 'compile-cache'));
import { main, processIO } from '../dist/main.js';

// Ctrl-C exits 130 at once, unless a command (svc serve) installed its own
// handler to shut down cleanly.
process.on('SIGINT', () => {
  if (process.listenerCount('SIGINT') === 1) process.exit(130);
});

process.exit(await main(process.argv.slice(2), processIO()));
