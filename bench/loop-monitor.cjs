// Preloaded (`node --require`) into a process the benchmark measures from
// outside: the server's longest event-loop block and the peak resident
// memory of either process, which only the process itself can see. Written
// as JSON to the file in SVC_BENCH_MONITOR on SIGUSR2 (the histogram then
// starts over, so a measurement leaves start-up out) and on exit.
'use strict';
const { monitorEventLoopDelay } = require('node:perf_hooks');
const { renameSync, writeFileSync } = require('node:fs');

const file = process.env.SVC_BENCH_MONITOR;
if (file) {
  // A timer that should fire every millisecond: how late it fires is how long the loop was held.
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  let reports = 0;
  const report = () => {
    reports++;
    const stats = { reports, maxBlockMs: delay.max / 1e6, p99BlockMs: delay.percentile(99) / 1e6, peakRssMiB: process.resourceUsage().maxRSS / 1024 };
    // Whole or not at all: the benchmark may read the file while this writes it.
    writeFileSync(`${file}.tmp`, JSON.stringify(stats));
    renameSync(`${file}.tmp`, file);
  };
  process.on('SIGUSR2', () => {
    report();
    delay.reset();
  });
  process.on('exit', report);
}
