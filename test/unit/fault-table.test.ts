// tier: in-process
/** The standing faults of `svc serve --local --latency/--fail-rate`, with the server's random source scripted. */
import { describe, expect, it } from 'vitest';
import { FaultTable } from '../../src/server/faults.js';

/** A random source that plays `values` in a loop. */
function script(...values: number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length]!;
}

describe('--fail-rate', () => {
  it('fails a request when the draw falls below the rate, choosing 502 or 503 by a second draw', () => {
    const table = new FaultTable({ failRate: 0.25 }, script(0.1, 0.2, 0.3, 0.1, 0.7));
    const first = table.take('GET', '/workspace');
    expect(first).toMatchObject({ fault: '--fail-rate', then: 'status', after: false, delayMs: 0 });
    expect(first!.reply).toMatchObject({ status: 502, body: { code: 'UNAVAILABLE' } });
    // 0.3 is not below 0.25: served as usual.
    expect(table.take('GET', '/workspace')).toBeNull();
    // 0.1 fails it, and 0.7 picks 503.
    expect(table.take('GET', '/workspace')!.reply).toMatchObject({ status: 503 });
  });

  it('fails about that share of many requests', () => {
    let seed = 42;
    // A fixed linear congruential sequence: the same numbers on every run.
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const table = new FaultTable({ failRate: 0.1 }, random);
    const statuses = Array.from({ length: 10_000 }, () => table.take('GET', '/workspace')?.reply?.status ?? 200);
    const failed = statuses.filter((s) => s !== 200);
    expect(failed.length).toBeGreaterThan(900);
    expect(failed.length).toBeLessThan(1_100);
    expect(new Set(failed)).toEqual(new Set([502, 503]));
  });

  it('gives way to a rule that matches', () => {
    const table = new FaultTable({ failRate: 1 }, script(0));
    const [rule] = table.add({ rules: [{ status: 429 }] });
    expect(table.take('GET', '/workspace')).toMatchObject({ fault: rule!.id, reply: { status: 429 } });
    expect(table.take('GET', '/workspace')).toMatchObject({ fault: '--fail-rate' });
  });
});

describe('--latency', () => {
  it('draws each delay from the range, and adds it to a rule\'s own', () => {
    const table = new FaultTable({ latency: { minMs: 100, maxMs: 300 } }, script(0, 1, 0.5));
    expect(table.take('GET', '/x')).toEqual({ fault: null, delayMs: 100, then: 'answer', after: false, landsAfterMs: null });
    expect(table.take('GET', '/x')!.delayMs).toBe(300);
    table.add({ rules: [{ delayMs: 50, status: 500 }] });
    expect(table.take('GET', '/x')).toMatchObject({ delayMs: 250, then: 'status' });
  });

  it('is nothing at all when off', () => {
    expect(new FaultTable({}, script(0)).take('GET', '/x')).toBeNull();
  });
});
