// tier: in-process
import { setFlagsFromString } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { restoreV8Flags, useBaselineWasm } from '../../src/client/v8-flags.js';

// What bin/load-bundle.js asks before it keeps a command's code: a cache
// made under other flags than a later run's would be refused on every run.
describe('the V8 flags svc changes', () => {
  it('come back as they were, and say so', () => {
    expect(restoreV8Flags()).toBe(true);
    useBaselineWasm();
    useBaselineWasm();
    expect(restoreV8Flags()).toBe(true);
  });

  it('are not reported back when a flag changed meanwhile stays changed, on the Node versions where svc changes one', () => {
    // From Node 24 svc changes none (src/client/v8-flags.ts): nothing of its own to put back, so nothing to refuse.
    const changesOne = Number(process.versions.node.split('.')[0]) < 24;
    useBaselineWasm();
    setFlagsFromString('--no-lazy');
    try {
      expect(restoreV8Flags()).toBe(!changesOne);
    } finally {
      setFlagsFromString('--lazy');
    }
  });
});
