#!/usr/bin/env node
import { ExitCode, main, processIO } from '../dist/main.js';

// Ctrl-C exits 130 at once, unless a command (svc serve) installed its own
// handler to shut down cleanly.
process.on('SIGINT', () => {
  if (process.listenerCount('SIGINT') === 1) process.exit(130);
});

// The reader went away (`svc keys list | head -1`): stop quietly, as a
// process killed by SIGPIPE would, rather than crash with a stack trace.
// Node ignores SIGPIPE itself, so the shell's status for it is set by hand.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(ExitCode.brokenPipe);
    throw error;
  });
}

process.exitCode = await main(process.argv.slice(2), processIO());

// Writes to a pipe are asynchronous: exiting now would cut off what the
// reader has not taken yet (everything past the pipe's 64 KiB buffer). An
// empty write's callback runs once everything queued before it is flushed.
await Promise.all([process.stdout, process.stderr].map((stream) => new Promise((resolve) => stream.write('', resolve))));
process.exit();
