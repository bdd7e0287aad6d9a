// tier: in-process
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Renderer } from '../../src/cli/terminal/renderer.js';
import { waitWithCountdown } from '../../src/cli/terminal/wait.js';
import { realDeps } from '../../src/cli/terminal/deps.js';
import { STOPPING_SIGNALS } from '../../src/cli/errors/errors.js';
import { memoryIO, terminalLibraries } from '../helpers/memory-io.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('waitWithCountdown', () => {
  it('counts down each second on a terminal and clears the line', async () => {
    vi.useFakeTimers();
    const { io, stderr } = memoryIO({ stderrIsTTY: true });
    let done = false;
    const waiting = waitWithCountdown(new Renderer(io, { quiet: false }, terminalLibraries), io, { reason: 'rate-limit', ms: 3000, cause: '429', stoppable: true }, realDeps).then(
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

  it('clears its line and ends as stopped on Ctrl-C', async () => {
    vi.useFakeTimers();
    const { io, stderr } = memoryIO({ stderrIsTTY: true });
    let interrupt: (signal: NodeJS.Signals) => void = () => {};
    let subscribed = 0;
    const onSignal = (signals: NodeJS.Signals[], listener: (signal: NodeJS.Signals) => void) => {
      expect(signals).toEqual(STOPPING_SIGNALS);
      interrupt = listener;
      subscribed++;
      return () => subscribed--;
    };
    const waiting = waitWithCountdown(new Renderer(io, { quiet: false }, terminalLibraries), io, { reason: 'rate-limit', ms: 30_000, cause: '429', stoppable: true }, { ...realDeps, onSignal });
    const outcome = waiting.then(
      () => 'finished',
      (error: Error) => error.name,
    );
    await vi.advanceTimersByTimeAsync(1500);
    expect(subscribed).toBe(1);
    interrupt('SIGINT');
    await vi.advanceTimersByTimeAsync(0);
    expect(await outcome).toBe('StoppedBeforeRetryError');
    expect(subscribed).toBe(0);
    expect(stderr().endsWith('(Ctrl-C to stop)\r\x1b[2K')).toBe(true);
  });

  it('writes one plain line when stderr is not a terminal', async () => {
    vi.useFakeTimers();
    const { io, stderr } = memoryIO();
    const waiting = waitWithCountdown(new Renderer(io, { quiet: false }, terminalLibraries), io, { reason: 'rate-limit', ms: 5000, cause: '429', stoppable: true }, realDeps);
    await vi.advanceTimersByTimeAsync(5000);
    await waiting;
    expect(stderr()).toBe('Rate limited; retrying in 5 s.\n');
  });

  it('announces a backoff with its cause', async () => {
    vi.useFakeTimers();
    const { io, stderr } = memoryIO();
    const waiting = waitWithCountdown(new Renderer(io, { quiet: false }, terminalLibraries), io, { reason: 'backoff', ms: 1000, cause: '503', stoppable: true }, realDeps);
    await vi.advanceTimersByTimeAsync(1000);
    await waiting;
    expect(stderr()).toBe('Request failed (503); retrying in 1.0 s.\n');
  });

  /** A fake onSignal: the signals svc subscribed to, and a way to send one. */
  function signals() {
    const listeners = new Set<(signal: NodeJS.Signals) => void>();
    return {
      listeners,
      onSignal: (_: NodeJS.Signals[], listener: (signal: NodeJS.Signals) => void) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      send: (signal: NodeJS.Signals) => [...listeners].forEach((listener) => listener(signal)),
    };
  }

  it.each(['rate-limit', 'backoff'] as const)('off a terminal, a %s wait after attempts that did nothing ends at once on SIGTERM', async (reason) => {
    vi.useFakeTimers();
    const { io } = memoryIO();
    const fake = signals();
    const outcome = waitWithCountdown(new Renderer(io, { quiet: false }, terminalLibraries), io, { reason, ms: 60_000, cause: '429', stoppable: true }, { ...realDeps, onSignal: fake.onSignal }).then(
      () => null,
      (error: Error & { signal: NodeJS.Signals | null }) => [error.name, error.signal],
    );
    await vi.advanceTimersByTimeAsync(0);
    fake.send('SIGTERM');
    await vi.advanceTimersByTimeAsync(0);
    expect(await outcome).toEqual(['StoppedBeforeRetryError', 'SIGTERM']);
    expect(fake.listeners.size).toBe(0);
  });

  it('after an attempt that may have landed, leaves the signal to the command: the retry tells', async () => {
    vi.useFakeTimers();
    const { io } = memoryIO();
    const fake = signals();
    let done = false;
    const waiting = waitWithCountdown(new Renderer(io, { quiet: false }, terminalLibraries), io, { reason: 'backoff', ms: 1000, cause: '503', stoppable: false }, { ...realDeps, onSignal: fake.onSignal }).then(
      () => (done = true),
    );
    expect(fake.listeners.size).toBe(0);
    await vi.advanceTimersByTimeAsync(1000);
    await waiting;
    expect(done).toBe(true);
  });
});
