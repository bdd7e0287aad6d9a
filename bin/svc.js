#!/usr/bin/env node
import { main, processIO } from '../dist/main.js';

// Ctrl-C exits 130 at once, unless a command (svc serve) installed its own
// handler to shut down cleanly.
process.on('SIGINT', () => {
  if (process.listenerCount('SIGINT') === 1) process.exit(130);
});

process.exit(await main(process.argv.slice(2), processIO()));
