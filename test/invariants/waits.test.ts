// tier: in-process
/**
 * Waits a person can see (issue 25, 1): a request that does not answer
 * shows what svc waits for on a terminal, and a connection refused by this
 * machine fails at once, saying to start the server. Timers are scripted
 * (deps.schedule), so nothing here waits on the wall clock.
 */
import { describe, expect, it } from 'vitest';
import { TransportError } from '../../src/client/errors.js';
import type { HttpRequest, HttpResponse, Transport } from '../../src/client/transport.js';
import { DEFAULT_BASE_URL } from '../../src/contract/paths.js';
import { refusedUrl } from '../helpers/fault-server.js';
import { svc, tempConfigDir } from '../helpers/in-process.js';

const KEY = `sk_${'w'.repeat(64)}`;
const config = tempConfigDir();
const env = (extra: Record<string, string> = {}) => ({ SVC_CONFIG_DIR: config.dir, SVC_API_KEY: KEY, SVC_BASE_URL: 'http://127.0.0.1:1', ...extra });
const CLEAR = '\r\x1b[2K';

/** Timers svc schedules, fired when the test says; a fake clock moved with them. */
function manualClock() {
  let nowMs = 1_000_000;
  const timers: { at: number; run: () => void; cancelled: boolean }[] = [];
  return {
    now: () => nowMs,
    schedule: (ms: number, run: () => void) => {
      const timer = { at: nowMs + ms, run, cancelled: false };
      timers.push(timer);
      return () => {
        timer.cancelled = true;
      };
    },
    /** Moves the clock on by `ms`, running every timer that falls due on the way. */
    advance(ms: number) {
      const end = nowMs + ms;
      for (;;) {
        const due = timers.filter((t) => !t.cancelled && t.at <= end).sort((a, b) => a.at - b.at)[0];
        if (!due) break;
        due.cancelled = true;
        nowMs = due.at;
        due.run();
      }
      nowMs = end;
    },
    pending: () => timers.filter((t) => !t.cancelled).length,
  };
}

/** A transport whose answer comes when the test says. */
function heldTransport() {
  let release!: (res: HttpResponse) => void;
  let arrived!: (req: HttpRequest) => void;
  const requested = new Promise<HttpRequest>((resolve) => (arrived = resolve));
  const transport: Transport = (req) => {
    arrived(req);
    return new Promise((resolve) => (release = resolve));
  };
  return { transport, requested, answer: (res: HttpResponse) => release(res) };
}

const keysAnswer: HttpResponse = { status: 200, headers: { 'content-type': 'application/json' }, text: '{"keys":[]}' };


/** An onSignal for deps that keeps its listeners where the test can fire them. */
function signalListeners() {
  const listeners: ((signal: NodeJS.Signals) => void)[] = [];
  const onSignal = (_: NodeJS.Signals[], listener: (signal: NodeJS.Signals) => void) => {
    listeners.push(listener);
    return () => listeners.splice(listeners.indexOf(listener), 1);
  };
  return { listeners, onSignal };
}
describe('a request that does not answer at once', () => {
  it('shows "Waiting for <address> (N s)" on a terminal from 300 ms on, counted each second, then clears it', async () => {
    const clock = manualClock();
    const held = heldTransport();
    const running = svc(['keys', 'list'], env(), { tty: true, deps: { transport: held.transport, now: clock.now, schedule: clock.schedule } });
    await held.requested;
    clock.advance(299);
    clock.advance(1);
    clock.advance(3_000);
    held.answer(keysAnswer);
    const result = await running;
    expect(result.exitCode, result.stderr).toBe(0);
    const drawn = result.stderr.split(CLEAR).filter(Boolean);
    expect(drawn.slice(0, 4)).toEqual([
      'Waiting for http://127.0.0.1:1',
      'Waiting for http://127.0.0.1:1 (1 s)',
      'Waiting for http://127.0.0.1:1 (2 s)',
      'Waiting for http://127.0.0.1:1 (3 s)',
    ]);
    // Cleared once the answer came: the line is gone before anything else is said.
    expect(result.stderr).toMatch(/\(3 s\)\r\x1b\[2K/);
    expect(result.stdout).not.toContain('Waiting');
    expect(clock.pending()).toBe(0);
  });

  it('shows nothing when it answers within 300 ms', async () => {
    const clock = manualClock();
    const held = heldTransport();
    const running = svc(['keys', 'list'], env(), { tty: true, deps: { transport: held.transport, now: clock.now, schedule: clock.schedule } });
    await held.requested;
    clock.advance(299);
    held.answer(keysAnswer);
    const result = await running;
    expect(result.stderr).toBe('No keys yet. Create one with `svc keys create <name>`.');
    expect(clock.pending()).toBe(0);
  });

  it.each([
    ['stderr is not a terminal', {}, false],
    ['CI is set', { CI: 'true' }, true],
    ['--quiet is given', {}, true, ['--quiet']],
  ] as const)('draws nothing when %s', async (_, extra, tty, flags: readonly string[] = []) => {
    const clock = manualClock();
    const held = heldTransport();
    const running = svc(['keys', 'list', ...flags], env(extra), { tty, deps: { transport: held.transport, now: clock.now, schedule: clock.schedule } });
    await held.requested;
    clock.advance(5_000);
    held.answer(keysAnswer);
    const result = await running;
    expect(result.stderr).not.toContain('Waiting');
  });

  it('Ctrl-C while the line shows clears it and ends the command with 130', async () => {
    const clock = manualClock();
    const held = heldTransport();
    const { listeners, onSignal } = signalListeners();
    const running = svc(['keys', 'list'], env(), { tty: true, deps: { transport: held.transport, now: clock.now, schedule: clock.schedule, onSignal } });
    await held.requested;
    clock.advance(2_000);
    expect(listeners).toHaveLength(1);
    listeners[0]!('SIGINT');
    const result = await running;
    expect(result.exitCode).toBe(130);
    expect(result.stderr.endsWith(`(2 s)${CLEAR}`)).toBe(true);
    expect(listeners).toHaveLength(0);
  });

  it('a message said while the line shows (a Ctrl-C during a create) clears it first', async () => {
    const clock = manualClock();
    const held = heldTransport();
    const { listeners, onSignal } = signalListeners();
    const running = svc(['keys', 'create', 'ci'], env(), { tty: true, deps: { transport: held.transport, now: clock.now, schedule: clock.schedule, onSignal } });
    await held.requested;
    clock.advance(1_500);
    // The create's own watch, the only one: a POST's Ctrl-C is the create's to decide.
    expect(listeners).toHaveLength(1);
    listeners[0]!('SIGINT');
    const secret = `sk_${'n'.repeat(64)}`;
    held.answer({ status: 201, headers: {}, text: JSON.stringify({ id: 'key_new', name: 'ci', secret }) });
    const result = await running;
    expect(result.exitCode).toBe(130);
    expect(result.stderr).toContain(`Waiting for http://127.0.0.1:1 (1 s)${CLEAR}! Interrupted while the create was out`);
    expect(result.stdout).toContain(secret);
  });
});

describe('a refused connection', () => {
  it('to this machine fails at once, not retried, and says to start the server on that port', async () => {
    const url = await refusedUrl();
    const result = await svc(['keys', 'list'], env({ SVC_BASE_URL: url }));
    expect(result.exitCode).toBe(1);
    expect(result.slept).toEqual([]);
    expect(result.stderr).not.toContain('retrying');
    const port = new URL(url).port;
    expect(result.stderr).toBe(
      [
        `error: Could not get an answer from ${url}: connection refused.`,
        'Is the server running? Nothing listens at that address on this machine (not retried: it would answer the same).',
        `\`svc serve --local --port ${port}\` starts the reference server there; or give the server's address to --base-url or SVC_BASE_URL.`,
      ].join('\n'),
    );
  });

  it('to the default address names `svc serve --local` and what to do when its port is taken', async () => {
    const urls: string[] = [];
    const transport: Transport = async (req) => {
      urls.push(req.url);
      throw new TransportError('connection refused', false, false, true);
    };
    const result = await svc(['keys', 'create', 'ci'], { SVC_CONFIG_DIR: config.dir, SVC_API_KEY: KEY }, { deps: { transport } });
    expect(result.exitCode).toBe(1);
    expect(urls).toEqual([`${DEFAULT_BASE_URL}/api/service/user/api-keys`]);
    expect(result.stderr).toContain('Is the server running?');
    expect(result.stderr).toContain('`svc serve --local` starts the reference server there; if port 8787 is taken, `svc serve --local --port 0` picks a free one');
  });

  it('by another host is retried, as any network error', async () => {
    let attempts = 0;
    const transport: Transport = async () => {
      attempts++;
      throw new TransportError('connection refused', false, false, true);
    };
    const result = await svc(['keys', 'list'], env({ SVC_BASE_URL: 'https://api.example.test' }), { deps: { transport } });
    expect(result.exitCode).toBe(1);
    expect(attempts).toBe(5);
    expect(result.slept).toHaveLength(4);
    expect(result.stderr).not.toContain('Nothing listens');
  });
});
