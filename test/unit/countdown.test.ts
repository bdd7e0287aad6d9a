// tier: in-process
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Renderer } from '../../src/cli/render/renderer.js';
import { waitWithCountdown } from '../../src/cli/wait.js';
import { realDeps } from '../../src/cli/deps.js';
import { memoryIO, terminalLibraries } from '../helpers/memory-io.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('waitWithCountdown', () => {
  it('counts down each second on a terminal and clears the line', async () => {
    vi.useFakeTimers();
    const { io, stderr } = memoryIO({ stderrIsTTY: true });
    let done = false;
    const waiting = waitWithCountdown(new Renderer(io, { quiet: false }, terminalLibraries), io, { reason: 'rate-limit', ms: 3000, cause: '429' }, realDeps).then(
      () => (done = true),
    );
    await vi.advanceTimersByTimeAsync(2999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await waiting;
    const text = stderr();
    expect(text).toContain('retrying in 3 s');
    expect(text).toContain('retrying in 2 s');
    expect(text).toContain('retrying in 1 s');
    expect(text.endsWith('\r\x1b[2K')).toBe(true);
  });

  it('clears its line and ends as interrupted on Ctrl-C', async () => {
    vi.useFakeTimers();
    const { io, stderr } = memoryIO({ stderrIsTTY: true });
    let interrupt: (signal: NodeJS.Signals) => void = () => {};
    let subscribed = 0;
    const onSignal = (signals: NodeJS.Signals[], listener: (signal: NodeJS.Signals) => void) => {
      expect(signals).toEqual(['SIGINT']);
      interrupt = listener;
      subscribed++;
      return () => subscribed--;
    };
    const waiting = waitWithCountdown(new Renderer(io, { quiet: false }, terminalLibraries), io, { reason: 'rate-limit', ms: 30_000, cause: '429' }, { ...realDeps, onSignal });
    const outcome = waiting.then(
      () => 'finished',
      (error: Error) => error.name,
    );
    await vi.advanceTimersByTimeAsync(1500);
    expect(subscribed).toBe(1);
    interrupt('SIGINT');
    await vi.advanceTimersByTimeAsync(0);
    expect(await outcome).toBe('InterruptedError');
    expect(subscribed).toBe(0);
    expect(stderr().endsWith('(Ctrl-C to stop)\r\x1b[2K')).toBe(true);
  });

  it('writes one plain line when stderr is not a terminal', async () => {
    vi.useFakeTimers();
    const { io, stderr } = memoryIO();
    const waiting = waitWithCountdown(new Renderer(io, { quiet: false }, terminalLibraries), io, { reason: 'rate-limit', ms: 5000, cause: '429' }, realDeps);
    await vi.advanceTimersByTimeAsync(5000);
    await waiting;
    expect(stderr()).toBe('Rate limited; retrying in 5 s.\n');
  });

  it('announces a backoff with its cause', async () => {
    vi.useFakeTimers();
    const { io, stderr } = memoryIO();
    const waiting = waitWithCountdown(new Renderer(io, { quiet: false }, terminalLibraries), io, { reason: 'backoff', ms: 1000, cause: '503' }, realDeps);
    await vi.advanceTimersByTimeAsync(1000);
    await waiting;
    expect(stderr()).toBe('Request failed (503); retrying in 1.0 s.\n');
  });
});
