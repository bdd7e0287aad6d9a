// undici parses HTTP with llhttp compiled to WebAssembly. A CLI makes a
// request or three and exits, so V8's optimising tier-up of that module is
// pure cost: measured here, it about doubles a one-request run's wall time
// and memory. Baseline (Liftoff) code parses these small answers fine. V8
// reads the flag when undici compiles the module, on the first connection.
//
// A V8 code cache is taken only under the flags it was made with, so the
// code svc keeps after a command (bin/load-bundle.js) is made with the flags
// put back as they were when svc started. node:v8 is loaded only when a
// flag changes: commands that make no request never need it.

let baselineOnly = false;

/** From now on WebAssembly runs on V8's baseline compiler only. */
export function useBaselineWasm(): void {
  if (baselineOnly) return;
  process.getBuiltinModule('node:v8').setFlagsFromString('--liftoff-only');
  baselineOnly = true;
}

/**
 * V8's flags as they were before useBaselineWasm. --liftoff-only also turned
 * the tier-up flags off, and `--no-liftoff-only` alone leaves them off; each
 * is set back to V8's default by name. bin/load-bundle.js checks that the
 * flags did come back before it keeps any code.
 */
export function restoreV8Flags(): void {
  if (!baselineOnly) return;
  process.getBuiltinModule('node:v8').setFlagsFromString('--no-liftoff-only --wasm-tier-up --wasm-dynamic-tiering');
  baselineOnly = false;
}
