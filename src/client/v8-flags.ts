// Every V8 flag svc changes, and the check that they came back; the one
// other place svc looks at flags is bin/load-bundle.js, which names its
// code caches by the flags node was started with (its command line and
// NODE_OPTIONS), since it must choose a cache before this code is loaded.
//
// undici parses HTTP with llhttp compiled to WebAssembly. A CLI makes a
// request or three and exits, so V8's optimising tier-up of that module is
// pure cost on Node 20 and 22; baseline (Liftoff) code parses these small
// answers fine. V8 reads the flag when undici compiles the module, on the
// first connection. Measured by bench/clever-parts.mjs (`svc keys list
// --json` of 30 keys against `svc serve --local --plan pro`, the package as
// built against a copy whose bundle asks for V8's default tiering instead;
// warm code caches; children in an environment of PATH and HOME only; 20
// rounds on a 2-core machine shared with other work), medians of the
// per-round ratios of default tiering to baseline only (interquartile range):
//   node bench/clever-parts.mjs --node <node> --rounds 20
//   Node 20.20.2  CPU ×2.53 (2.43–2.74)  wall ×2.41  peak memory ×1.67
//   Node 22.23.3  CPU ×1.76 (1.62–1.85)  wall ×1.75  peak memory ×1.32
//   Node 24.22.3  CPU ×1.00 (0.94–1.06)  wall ×1.00  peak memory ×1.00
//   Node 26.12.1  CPU ×1.00 (0.96–1.00)  wall ×0.99  peak memory ×1.00
// On Node 24 and 26 it does not pay: default tiering measures the same,
// and setting the flag costs the loading of node:v8, about 5 ms timed alone
// (the copy measured loads it too, to set the default). So from Node 24 svc
// leaves V8's tiering alone; the rest of this file goes when svc's oldest
// Node is 24.
//
// A V8 code cache is taken only under the flags it was made with, so the
// code svc keeps after a command (bin/load-bundle.js) is made with the flags
// put back as they were when svc started, and only once a cache of a
// one-character script, made before the first change, is taken again: that
// is V8's own comparison of the flags. node:v8 is loaded only when a flag
// changes (about 5 ms of a start): commands that make no request never
// need it.

/** A cache of a one-character script made under the flags svc started with; set while they are changed. */
let probe: Buffer | undefined;

/** The probe's source name. */
const PROBE = 'svc-v8-flags-probe';

/** The Node versions on which baseline-only WebAssembly pays (see above). */
const PAYS = Number(process.versions.node.split('.')[0]) < 24;

/** From now on WebAssembly runs on V8's baseline compiler only, where that pays. */
export function useBaselineWasm(): void {
  if (!PAYS || probe !== undefined) return;
  probe = new (process.getBuiltinModule('node:vm').Script)('0', { filename: PROBE }).createCachedData();
  process.getBuiltinModule('node:v8').setFlagsFromString('--liftoff-only');
}

/**
 * Puts V8's flags back as they were before useBaselineWasm, and tells
 * whether they are: only then does a code cache made now suit a later run.
 * --liftoff-only also turned the tier-up flags off, and
 * `--no-liftoff-only` alone leaves them off; each is set back to V8's
 * default by name.
 */
export function restoreV8Flags(): boolean {
  if (probe === undefined) return true;
  process.getBuiltinModule('node:v8').setFlagsFromString('--no-liftoff-only --wasm-tier-up --wasm-dynamic-tiering');
  const cachedData = probe;
  probe = undefined;
  // Another script of the same length, which V8 checks a cache against:
  // the same one would come from V8's memory without a look at the cache.
  return !new (process.getBuiltinModule('node:vm').Script)('1', { filename: PROBE, cachedData }).cachedDataRejected;
}
